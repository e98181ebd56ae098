// Percentiles, medians and the formatting the report shares.

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** p50/p95/p99 and the mean of a list of milliseconds. */
export function latencySummary(samples) {
  const sorted = Float64Array.from(samples).sort();
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return {
    p50_ms: percentile(sorted, 50),
    p95_ms: percentile(sorted, 95),
    p99_ms: percentile(sorted, 99),
    mean_ms: mean,
    samples: sorted.length,
  };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Rounds every number in a JSON-able value to `digits` decimals (for the printed JSON). */
export function rounded(value, digits = 3) {
  if (typeof value === 'number') return Number.isFinite(value) ? Number(value.toFixed(digits)) : null;
  if (Array.isArray(value)) return value.map((v) => rounded(v, digits));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rounded(v, digits)]));
  }
  return value;
}

export const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);
export const fmtMs = (v, digits = 3) => (Number.isFinite(v) ? `${v.toFixed(digits)} ms` : '-');
export const fmtRatio = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}x` : '-');
export const fmtMiB = (bytes) => (Number.isFinite(bytes) ? `${(bytes / 1048576).toFixed(1)} MiB` : '-');
export const fmtRate = (v) => (Number.isFinite(v) ? `${Math.round(v)} cmd/s` : '-');

/** A plain text table: `rows` are arrays of cells, the first row the header. */
export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? String(c ?? '').padEnd(widths[i]) : String(c ?? '').padStart(widths[i]))).join('  '))
    .join('\n');
}
