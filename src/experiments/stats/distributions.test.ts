// Reference values: the normal ones from published tables (Φ(1.96), the 97.5 % and 5 % quantiles); Student's t for
// 1 and 2 degrees of freedom from its closed forms (Cauchy: ½ + atan(t)/π; df 2: ½ + t / (2√(2 + t²))), and the
// 97.5 % quantiles for 1, 10 and 30 degrees of freedom from published t tables.
import { describe, expect, test } from 'bun:test'
import { normalCdf, normalQuantile, regularizedBeta, studentTCdf, studentTQuantile } from './distributions'

describe('normal distribution', () => {
  test('CDF against table values', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7)
    expect(normalCdf(1.96)).toBeCloseTo(0.9750021, 6)
    expect(normalCdf(-1)).toBeCloseTo(0.1586553, 6)
    expect(normalCdf(3)).toBeCloseTo(0.9986501, 6)
    expect(normalCdf(Infinity)).toBe(1)
  })
  test('quantile against table values, and the CDF inverted', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 6)
    expect(normalQuantile(0.05)).toBeCloseTo(-1.644854, 6)
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 5)
    for (const p of [0.01, 0.2, 0.5, 0.7, 0.99]) expect(normalCdf(normalQuantile(p))).toBeCloseTo(p, 6)
    expect(normalQuantile(0)).toBe(-Infinity)
    expect(Number.isNaN(normalQuantile(2))).toBe(true)
  })
})

describe("Student's t distribution", () => {
  test('CDF against the closed forms for 1 and 2 degrees of freedom', () => {
    for (const t of [-3, -0.5, 0, 1, 2.5, 10]) {
      expect(studentTCdf(t, 1)).toBeCloseTo(0.5 + Math.atan(t) / Math.PI, 10)
      expect(studentTCdf(t, 2)).toBeCloseTo(0.5 + t / (2 * Math.sqrt(2 + t * t)), 10)
    }
  })
  test('97.5 % quantiles against the t table; large df tends to the normal', () => {
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.7062, 3)
    expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.2281, 4)
    expect(studentTQuantile(0.975, 30)).toBeCloseTo(2.0423, 4)
    expect(studentTQuantile(0.025, 10)).toBeCloseTo(-2.2281, 4)
    expect(studentTQuantile(0.975, 1e9)).toBeCloseTo(1.959964, 5)
  })
  test('incomplete beta: I_x(1, 1) = x and I_x(a, b) = 1 − I_(1−x)(b, a)', () => {
    expect(regularizedBeta(0.3, 1, 1)).toBeCloseTo(0.3, 12)
    expect(regularizedBeta(0.4, 2.5, 3) + regularizedBeta(0.6, 3, 2.5)).toBeCloseTo(1, 12)
  })
})
