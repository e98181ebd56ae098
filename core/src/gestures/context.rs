//! What a write's surroundings say when the label of the element that sends it does not:
//! - a **generic** button (`Save`, `Set up`, `Erstellen`, `Afficher`, `保存`: it names no object
//!   of its own, or only its verb's) is about what the heading of its dialog or section names
//!   (`Save` under `Two-factor authentication`, `Reset` under `Reset root password`, `Show` under
//!   `Card PIN`, `Save changes` under `Visibility`): a secret, sharing, a deletion, a payment;
//! - `Empty` (`Leeren`, `Vider`, `清空`) as a write empties something of its data (a bucket, a
//!   trash), unless it names a cart or a filter;
//! - a verb that moves money (`Sell`, `Top up`, `Subscribe`) with an amount in its section pays.
//!
//! Counted only where the element's gesture writes (its form's submission, or the write its
//! click handler sends): a `Set up` that only opens a dialog asks nothing, and `Cancel`, `Back`
//! or `Power cycle` under a sensitive heading name nothing generic.

use super::vocabulary::{self, Found, Kind, Label};
use tabtunnel_wire::gestures::ElementFacts;

/// Verbs that name no object of their own: what they do is what their section is about.
const GENERIC: &[&str] = &[
    // English
    "save",
    "save changes",
    "submit",
    "confirm",
    "ok",
    "yes",
    "apply",
    "update",
    "set up",
    "setup",
    "set",
    "create",
    "add",
    "rotate",
    "regenerate",
    "generate",
    "show",
    "reveal",
    "view",
    "enable",
    "turn on",
    "activate",
    "done",
    "verify",
    "reset",
    "change",
    "edit",
    // German
    "speichern",
    "änderungen speichern",
    "bestätigen",
    "ja",
    "übernehmen",
    "einrichten",
    "erstellen",
    "anlegen",
    "hinzufügen",
    "anzeigen",
    "aktivieren",
    "fertig",
    "zurücksetzen",
    "ändern",
    "aktualisieren",
    // French
    "enregistrer",
    "valider",
    "confirmer",
    "oui",
    "appliquer",
    "créer",
    "ajouter",
    "afficher",
    "activer",
    "terminé",
    "modifier",
    "configurer",
    "réinitialiser",
    "mettre à jour",
    // Spanish
    "guardar",
    "guardar cambios",
    "confirmar",
    "aceptar",
    "sí",
    "aplicar",
    "crear",
    "agregar",
    "añadir",
    "mostrar",
    "ver",
    "activar",
    "listo",
    "configurar",
    "restablecer",
    "cambiar",
    "actualizar",
    // Italian
    "salva",
    "salva modifiche",
    "conferma",
    "applica",
    "crea",
    "aggiungi",
    "mostra",
    "visualizza",
    "attiva",
    "fatto",
    "configura",
    "reimposta",
    "modifica",
    "aggiorna",
    // Portuguese
    "salvar",
    "salvar alterações",
    "sim",
    "criar",
    "adicionar",
    "exibir",
    "ativar",
    "concluir",
    "redefinir",
    "alterar",
    "atualizar",
    // Dutch
    "opslaan",
    "wijzigingen opslaan",
    "bevestigen",
    "toepassen",
    "maken",
    "aanmaken",
    "toevoegen",
    "tonen",
    "weergeven",
    "inschakelen",
    "activeren",
    "klaar",
    "instellen",
    "wijzigen",
    "bijwerken",
    // Polish
    "zapisz",
    "zapisz zmiany",
    "potwierdź",
    "tak",
    "zastosuj",
    "utwórz",
    "dodaj",
    "pokaż",
    "włącz",
    "aktywuj",
    "gotowe",
    "skonfiguruj",
    "zmień",
    "zresetuj",
    "aktualizuj",
    // Japanese and Chinese
    "保存",
    "確認",
    "はい",
    "適用",
    "作成",
    "追加",
    "表示",
    "有効",
    "完了",
    "設定",
    "変更",
    "更新",
    "リセット",
    "生成",
    "确认",
    "是",
    "应用",
    "创建",
    "添加",
    "显示",
    "启用",
    "设置",
    "更改",
    "重置",
    // Thai
    "บันทึกการเปลี่ยนแปลง",
    "บันทึก",
    "ยืนยัน",
    "ตกลง",
    "นำไปใช้",
    "เปิดใช้งาน",
    "ใช้",
    "ใช่",
    "ตั้งค่า",
    "สร้างใหม่",
    "สร้าง",
    "เพิ่ม",
    "แสดง",
    "ดู",
    "เปิด",
    "เสร็จสิ้น",
    "เสร็จ",
    "ตรวจสอบ",
    "รีเซ็ต",
    "เปลี่ยน",
    "แก้ไข",
    "อัปเดต",
    "อัพเดต",
    "อัพเดท",
    // Persian (`ثبت`, submit, is the Iranian forms' everyday button)
    "ذخیره",
    "ذخیره تغییرات",
    "ثبت",
    "تأیید",
    "تایید",
    "تأييد",
    "تاييد",
    "باشه",
    "قبول",
    "بله",
    "اعمال",
    "به روزرسانی",
    "به روز رسانی",
    "بروزرسانی",
    "ایجاد",
    "ساخت",
    "افزودن",
    "اضافه",
    "نمایش",
    "مشاهده",
    "فعال سازی",
    "فعالسازی",
    "فعال کردن",
    "روشن کردن",
    "تنظیم",
    "راه اندازی",
    "انجام شد",
    "تمام",
    "بازنشانی",
    "تغییر",
    "ویرایش",
    "تولید",
    "تولید مجدد",
    "ایجاد مجدد",
];

/// Words filling a generic label besides its verb (`Save my changes`, `Set it up now`).
const FILLERS: &[&str] = &[
    "my",
    "it",
    "the",
    "now",
    "changes",
    "all",
    "new",
    "a",
    "an",
    "up",
    "jetzt",
    "änderungen",
    "les",
    "modifications",
    "maintenant",
    "cambios",
    "ahora",
    "modifiche",
    "alterações",
    "agora",
    "wijzigingen",
    "nu",
    "zmiany",
    "teraz",
    "การเปลี่ยนแปลง",
    "ทั้งหมด",
    "ตอนนี้",
    "ของฉัน",
    "เลย",
    "ใหม่",
    "کنید",
    "کن",
    "کردن",
    "شود",
    "تغییرات",
    "همه",
    "اکنون",
    "الان",
    "جدید",
    "من",
    "را",
];

/// Secrets a heading names: a generic write under it changes, makes or shows one. A bare `key`,
/// `pin` or `token` is left out (`Key results`, Pinterest's `Create Pin`, `Design tokens`): the
/// compounds are listed (`palabras clave`, `キーワード` are keywords), and the acronym `PIN` counts written in capitals (see [`PIN`]).
const SECRETS: &[&str] = &[
    "password",
    "passwords",
    "passphrase",
    "pin code",
    "api key",
    "api keys",
    "access key",
    "access keys",
    "ssh key",
    "ssh keys",
    "security key",
    "security keys",
    "secret key",
    "private key",
    "deploy key",
    "deploy keys",
    "signing key",
    "keys",
    "access token",
    "access tokens",
    "api token",
    "api tokens",
    "secret",
    "client secret",
    "credentials",
    "two factor",
    "two step",
    "2fa",
    "mfa",
    "multi factor",
    "multifactor",
    "authenticator",
    "passkey",
    "passkeys",
    "recovery codes",
    "backup codes",
    "passwort",
    "kennwort",
    "schlüssel",
    "zwei faktor",
    "mot de passe",
    "code pin",
    "clé api",
    "clé d accès",
    "jeton",
    "contraseña",
    "clave de acceso",
    "clave api",
    "claves api",
    "clave secreta",
    "secreto",
    "secreto de cliente",
    "chiave api",
    "chiavi api",
    "chiave di accesso",
    "chiave segreta",
    "segreto",
    "senha",
    "chave de api",
    "chave api",
    "chave de acesso",
    "chaves de acesso",
    "segredo",
    "wachtwoord",
    "sleutel",
    "sleutels",
    "geheim",
    "hasło",
    "hasła",
    "klucz",
    "klucze",
    "パスワード",
    "暗証番号",
    "apiキー",
    "アクセスキー",
    "秘密鍵",
    "セキュリティキー",
    "トークン",
    "二段階",
    "二要素",
    "密码",
    "密钥",
    "令牌",
    "双重验证",
    "两步验证",
    "รหัสผ่าน",
    "รหัส pin",
    "คีย์ api",
    "คีย์ ssh",
    "คีย์ลับ",
    "คีย์ความปลอดภัย",
    "คีย์การเข้าถึง",
    "โทเค็นการเข้าถึง",
    "แบบ 2 ขั้นตอน",
    "แบบสองขั้นตอน",
    "สองปัจจัย",
    "หลายปัจจัย",
    "รหัสสำรอง",
    "พาสคีย์",
    "رمز عبور",
    "رمز ورود",
    "کلمه عبور",
    "گذرواژه",
    "رمز دوم",
    "رمز اینترنتی",
    "رمز کارت",
    "کد پین",
    "کلید api",
    "کلید امنیتی",
    "کلید دسترسی",
    "کلید خصوصی",
    "کلید مخفی",
    "کلید ssh",
    "کلید عبور",
    "توکن دسترسی",
    "دو مرحله ای",
    "دومرحله ای",
    "۲ مرحله ای",
    "دو عاملی",
    "کدهای بازیابی",
    "کد های بازیابی",
    "کدهای پشتیبان",
];

/// A card's or phone's `PIN`: a word of its own, in capitals (`Show PIN`, `Code PIN`), so that a
/// pinned message or a map's pin is none.
const PIN: &str = "PIN";

/// What a heading over a sharing setting names.
const SHARING: &[&str] = &[
    "visibility",
    "permissions",
    "sharing",
    "general access",
    "who can see",
    "who can access",
    "link settings",
    "public access",
    "access level",
    "roles",
    "admin roles",
    "collaborators",
    "sichtbarkeit",
    "berechtigungen",
    "freigabe",
    "freigaben",
    "rollen",
    "visibilité",
    "autorisations",
    "partage",
    "rôles",
    "visibilidad",
    "permisos",
    "roles de administrador",
    "visibilità",
    "autorizzazioni",
    "permessi",
    "condivisione",
    "ruoli",
    "visibilidade",
    "permissões",
    "compartilhamento",
    "partilha",
    "funções",
    "zichtbaarheid",
    "machtigingen",
    "rechten",
    "widoczność",
    "uprawnienia",
    "udostępnianie",
    "公開設定",
    "共有設定",
    "権限",
    "可见性",
    "权限",
    "链接设置",
    "共享设置",
    "การแชร์",
    "การแบ่งปัน",
    "สิทธิ์การเข้าถึง",
    "สิทธิ์ในการเข้าถึง",
    "การเข้าถึงทั่วไป",
    "ระดับการเข้าถึง",
    "การมองเห็น",
    "บทบาท",
    "ผู้ทำงานร่วมกัน",
    "سطح دسترسی",
    "دسترسی ها",
    "دسترسیها",
    "مجوزها",
    "مجوز ها",
    "نقش ها",
    "نقشها",
    "اشتراک گذاری",
    "هم رسانی",
    "قابلیت مشاهده",
    "دسترسی عمومی",
    "همکاران",
];

/// `Empty` as a write: it removes what a bucket or a trash holds.
const EMPTYING: &[&str] = &[
    "empty",
    "leeren",
    "vider",
    "vaciar",
    "svuota",
    "esvaziar",
    "legen",
    "leegmaken",
    "opróżnij",
    "空にする",
    "清空",
    // Persian
    "خالی",
    "تخلیه",
];

/// What an element is called: its accessible name, else its text, else what its link says.
pub fn label_of(element: &ElementFacts) -> String {
    [&element.name, &element.text].into_iter().find(|t| !t.trim().is_empty()).cloned().unwrap_or_default()
}

/// The kinds the element's surroundings give the write it sends (see the module's rules);
/// `priced`: its section's text (`element.nearby`) has an amount of money.
pub fn said_around(element: &ElementFacts, priced: bool, extra: &[String]) -> Vec<Found> {
    let label_text = label_of(element);
    let label = Label::new(&label_text);
    let mut found = Vec::new();
    if label.is_empty() || vocabulary::names_no_data(&label_text) {
        return found;
    }
    let around = |kind, words: &str, language| Found { kind: Some(kind), words: words.to_owned(), language };
    // The verb empties: first in the label (`Empty trash`, `Vider`), or last where verbs go last
    // (`Papierkorb leeren`); `Hide empty folders` empties nothing.
    let empties = |w: &&&str| {
        if w.chars().any(vocabulary::is_unspaced) {
            label.has(w)
        } else {
            [label.words().first(), label.words().last()].into_iter().flatten().any(|x| x == **w)
        }
    };
    if let Some(word) = EMPTYING.iter().find(empties) {
        found.push(around(Kind::Deleting, word, "a write that empties"));
    }
    let own = vocabulary::find(&label_text, extra);
    let pin = says_pin(&label_text);
    let generic = is_generic(&label, pin);
    // A verb that moves money with an amount in its section (`Sell` beside `You get €612.04`);
    // a label that says it sends (`Send` in a chat whose messages name a price) stays a message,
    // and a generic one (`Confirm`, `更新`) is its heading's (a cart's `Update` beside prices).
    let says_itself = own.iter().any(|f| matches!(f.kind, Some(Kind::Paying | Kind::Sending)));
    if !says_itself && !generic && priced {
        let priced = vocabulary::find_priced(&label_text, extra, true);
        if let Some(f) = priced.into_iter().find(|f| f.kind == Some(Kind::Paying)) {
            found.push(Found { language: "an amount in its section", ..f });
        }
    }
    if !own.is_empty() || !generic {
        return found;
    }
    let heading = Label::new(&element.context);
    let secret = SECRETS.iter().find(|w| heading.has(w) || label.has(w)).copied();
    if let Some(word) = secret.or_else(|| (pin || says_pin(&element.context)).then_some(PIN)) {
        found.push(around(Kind::Secrets, word, "the heading around it"));
    }
    if let Some(word) = SHARING.iter().find(|w| heading.has(w)) {
        found.push(around(Kind::Sharing, word, "the heading around it"));
    }
    // What the heading itself says, but sending: a `Save` under `New post` saves a draft.
    for f in vocabulary::find(&element.context, extra) {
        if f.kind.is_some_and(|k| k != Kind::Sending) {
            found.push(Found { language: "the heading around it", ..f });
        }
    }
    found
}

/// Whether a text names a `PIN` (see [`PIN`]).
fn says_pin(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| w == PIN)
}

/// Whether a label is a generic verb, with at most fillers or a secret's name beside it
/// (`Save changes`, `Show PIN`, `Create access key`).
fn is_generic(label: &Label, pin: bool) -> bool {
    let mut rest = format!(" {} ", label.words().join(" "));
    let mut verb = false;
    let pin = pin.then_some("pin");
    for entry in GENERIC.iter().chain(SECRETS).chain(FILLERS).chain(pin.as_ref()) {
        let before = rest.clone();
        if entry.chars().any(vocabulary::is_unspaced) {
            rest = rest.replace(entry, " ");
        } else {
            // Twice, for entries next to each other sharing a space.
            rest = rest.replace(&format!(" {entry} "), "  ").replace(&format!(" {entry} "), "  ");
        }
        if rest != before && GENERIC.contains(entry) {
            verb = true;
        }
    }
    verb && rest.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(element: &ElementFacts) -> Vec<Kind> {
        let priced = !crate::gestures::rule::amounts(&element.nearby, 1).is_empty();
        let mut kinds: Vec<Kind> =
            said_around(element, priced, &[]).into_iter().filter_map(|f| f.kind).collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    fn under(label: &str, context: &str) -> Vec<Kind> {
        kinds(&ElementFacts { name: label.into(), context: context.into(), ..Default::default() })
    }

    fn beside(label: &str, nearby: &str) -> Vec<Kind> {
        kinds(&ElementFacts { name: label.into(), nearby: nearby.into(), ..Default::default() })
    }

    #[test]
    fn a_generic_button_is_about_its_sections_heading() {
        assert_eq!(under("Set up", "Two-factor authentication"), [Kind::Secrets]);
        assert_eq!(under("Einrichten", "Zwei-Faktor-Authentifizierung"), [Kind::Secrets]);
        assert_eq!(under("Erstellen", "Neuer API-Schlüssel"), [Kind::Secrets]);
        assert_eq!(under("Rotate", "Access keys"), [Kind::Secrets]);
        assert_eq!(under("Reset", "Droplet web-01: Reset root password"), [Kind::Secrets]);
        assert_eq!(under("Guardar", "Autenticación multifactor"), [Kind::Secrets]);
        assert_eq!(under("Agregar", "Agregar un secreto de cliente"), [Kind::Secrets]);
        assert_eq!(under("Save changes", "Visibility"), [Kind::Sharing]);
        assert_eq!(under("Guardar cambios", "Roles de administrador"), [Kind::Sharing]);
        assert_eq!(under("保存", "链接设置"), [Kind::Sharing]);
        assert_eq!(under("Confirm", "Delete this repository"), [Kind::Deleting]);
        assert_eq!(under("OK", "Buy now"), [Kind::Paying]);
        // A heading that says sending leaves a generic `Save` a draft's.
        assert_eq!(under("Save", "Reply to Ana"), []);
    }

    #[test]
    fn a_button_that_names_its_own_object_or_cancels_says_nothing_of_its_section() {
        assert_eq!(under("Power cycle", "Droplet web-01: Reset root password"), []);
        assert_eq!(under("Cancel", "Delete this repository"), []);
        assert_eq!(under("Guardar", "Idioma y zona horaria"), []);
        assert_eq!(under("Add to cart", "API keys"), []);
        assert_eq!(under("Enable CDN", "Spaces Object Storage"), []);
        assert_eq!(under("Save", "Notification settings"), []);
        assert_eq!(under("Créer un espace", "Espaces"), []);
    }

    #[test]
    fn keywords_key_results_and_a_maps_pin_are_no_secrets_but_a_pin_in_capitals_is() {
        assert_eq!(under("Save", "Key results"), []);
        assert_eq!(under("Guardar", "Palabras clave"), []);
        assert_eq!(under("Salva", "Parole chiave"), []);
        assert_eq!(under("保存", "キーワード設定"), []);
        assert_eq!(under("Create Pin", "Create Pin"), []);
        assert_eq!(under("Save", "Pinned messages"), []);
        assert_eq!(under("Show PIN", "Card"), [Kind::Secrets]);
        assert_eq!(under("Afficher", "Code PIN de la carte"), [Kind::Secrets]);
        assert_eq!(under("Show", "Your card's PIN"), [Kind::Secrets]);
        assert_eq!(under("Create", "New access key"), [Kind::Secrets]);
    }

    #[test]
    fn emptying_as_a_verb_deletes() {
        assert_eq!(under("Empty", "Empty assets-prod?"), [Kind::Deleting]);
        assert_eq!(under("Papierkorb leeren", ""), [Kind::Deleting]);
        assert_eq!(under("清空", "回收站"), [Kind::Deleting]);
        assert_eq!(under("すべて空にする", "ゴミ箱"), [Kind::Deleting]);
        assert_eq!(under("Empty cart", "Your cart"), []);
        assert_eq!(under("Hide empty folders", ""), []);
    }

    #[test]
    fn a_money_verb_pays_next_to_an_amount_in_its_section() {
        assert_eq!(beside("Jetzt verkaufen", "Handeln Du erhältst ca. 612,04 €"), [Kind::Paying]);
        assert_eq!(beside("Subskrybuj", "Nitro — 49,99 zł/mies."), [Kind::Paying]);
        assert_eq!(beside("Recharger", "Montant 50,00 € depuis la carte"), [Kind::Paying]);
        assert_eq!(beside("Adicionar fundos", "Carteira Steam R$ 50,00"), [Kind::Paying]);
        assert_eq!(beside("Jetzt verkaufen", "Handeln"), []);
        assert_eq!(beside("Add to cart", "Total $25.00"), []);
        assert_eq!(beside("Ver preços", "Você receberá: R$ 12,40"), []);
        // A message that names a price is still a message; a generic verb is its heading's.
        assert_eq!(beside("Send", "Ana: can you lend me $20?"), []);
        assert_eq!(beside("Confirm", "Standard shipping €4.99"), []);
        assert_eq!(beside("更新", "数量 2 ¥1,000"), []);
    }
}
