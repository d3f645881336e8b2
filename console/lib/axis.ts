// A chart's value axis (pure: unit-tested in axis.test.ts): round steps (1, 2 or 5 times a power of ten) from 0
// to at least the largest value, at most `most` steps.

export function axisTicks(max: number, most = 4): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1]
  const raw = max / most
  const power = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power
  // whole counts never get fractional steps
  const whole = Number.isInteger(max) ? Math.max(1, Math.round(step)) : step
  const top = Math.ceil(max / whole) * whole
  const ticks: number[] = []
  for (let v = 0; v <= top + whole / 2; v += whole) ticks.push(Number(v.toPrecision(12)))
  return ticks
}

/** A tick's text: 1200 → "1.2k", 3000000 → "3M". */
export function tickText(value: number): string {
  const abs = Math.abs(value)
  if (abs >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`
  if (abs >= 1e3) return `${Number((value / 1e3).toPrecision(3))}k`
  return String(Number(value.toPrecision(3)))
}

/** Which of `n` points get a label on the time axis: about `most`, evenly spread, the last always. */
export function labelledIndexes(n: number, most = 5): number[] {
  if (n <= 0) return []
  const every = Math.max(1, Math.ceil(n / most))
  const out: number[] = []
  for (let i = (n - 1) % every; i < n; i += every) out.push(i)
  return out
}
