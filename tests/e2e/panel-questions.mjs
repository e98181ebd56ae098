// The side panel's gesture questions as a test sees and answers them (through the panel page, as
// the human does).

const QUESTION = '#approvals li.gesture[data-request-id]';

/** `panel`: the side panel page; `h`: the harness, for failure details. */
export function panelQuestions(h, panel, waitMs) {
  /** The question the panel shows now: its id, text, kinds and buttons. */
  async function question() {
    await panel.waitForSelector(QUESTION, { timeout: waitMs }).catch(async (e) => {
      const html = await panel.$eval('body', (b) => b.innerHTML).catch((x) => x.message);
      throw new Error(`${e.message}\npanel: ${html.slice(0, 3000)}\n${h.detail()}`);
    });
    return panel.$eval(QUESTION, (li) => ({
      id: li.dataset.requestId,
      text: li.textContent,
      kinds: li.querySelector('.kinds')?.dataset.kinds ?? '',
      buttons: [...li.querySelectorAll('button')].map((b) => ({ answer: b.dataset.answer, ms: b.dataset.ms, label: b.textContent })),
    }));
  }

  /** Presses `what` (`allow`, `deny`, `for` with `ms`) on question `id`. */
  async function answer(id, what, ms) {
    const item = QUESTION.replace('[data-request-id]', `[data-request-id="${id}"]`);
    await panel.click(`${item} button[data-answer="${what}"]${ms ? `[data-ms="${ms}"]` : ''}`);
    await panel.waitForSelector(`#approvals li[data-request-id="${id}"]`, { hidden: true, timeout: waitMs });
  }

  return { question, answer };
}
