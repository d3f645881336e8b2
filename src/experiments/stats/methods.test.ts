// The experiment statistics on small data sets whose figures are worked out by hand in the test (delta-method
// variance, Welch–Satterthwaite degrees of freedom), using the distributions checked in distributions.test.ts.
import { describe, expect, test } from 'bun:test'
import { normalCdf } from './distributions'
import { bayesian, estimate, frequentist, recommendedSampleSize, relativeEffect, validationFailures, type VariantCounts } from './methods'

const funnel = (key: string, n: number, conversions: number): VariantCounts => ({ key, number_of_samples: n, sum: conversions, sum_squares: conversions })

describe('experiment statistics', () => {
  test('10 % vs 30 % of 120 each: the relative effect is +200 %, significant both ways', () => {
    const control = estimate(funnel('control', 120, 12), 'funnel')
    const test = estimate(funnel('test', 120, 36), 'funnel')
    // by hand: var(test mean)/0.1² + 0.3² var(control mean)/0.1⁴ = (0.21/120)/0.01 + 0.09 (0.09/120)/0.0001 = 0.175 + 0.675
    const { effect, se } = relativeEffect(control, test)
    expect(effect).toBeCloseTo(2, 12)
    expect(se).toBeCloseTo(Math.sqrt(0.85), 12)
    const b = bayesian(control, test)
    expect(b.chance_to_win).toBeCloseTo(normalCdf(2 / Math.sqrt(0.85)), 12)
    expect(b.chance_to_win).toBeCloseTo(0.98497, 4)
    expect(b.credible_interval[0]).toBeCloseTo(2 - 1.959964 * Math.sqrt(0.85), 5)
    expect(b.credible_interval[1]).toBeCloseTo(2 + 1.959964 * Math.sqrt(0.85), 5)
    expect(b.significant).toBe(true)
    const f = frequentist(control, test)
    // df = (0.00075 + 0.00175)² / (0.00075²/119 + 0.00175²/119) = 201.22…; t = 2/√0.85 = 2.1693; two-sided p ≈ 0.0312
    expect(f.p_value).toBeGreaterThan(0.03)
    expect(f.p_value).toBeLessThan(0.033)
    expect(f.significant).toBe(true)
    expect(f.confidence_interval[0]).toBeGreaterThan(0)
    expect(f.confidence_interval[0]).toBeLessThan(b.credible_interval[0]) // the t interval is a little wider
  })

  test('an A/A test is not significant; chance to win is ½', () => {
    const a = estimate(funnel('control', 500, 100), 'funnel')
    const b = estimate(funnel('test', 500, 100), 'funnel')
    const same = bayesian(a, b)
    expect(same.chance_to_win).toBeCloseTo(0.5, 7)
    expect(same.significant).toBe(false)
    expect(frequentist(a, b)).toMatchObject({ p_value: 1, significant: false })
  })

  test('a goal to decrease turns the chance to win around', () => {
    const control = estimate(funnel('control', 120, 36), 'funnel')
    const lower = estimate(funnel('test', 120, 12), 'funnel')
    expect(bayesian(control, lower, 'decrease').chance_to_win).toBeGreaterThan(0.95)
    expect(bayesian(control, lower, 'increase').chance_to_win).toBeLessThan(0.05)
  })

  test('a mean metric uses the sample variance from sum and sum of squares', () => {
    // values 1, 2, 3, 4 → mean 2.5, sample variance 5/3
    const e = estimate({ key: 'control', number_of_samples: 4, sum: 10, sum_squares: 30 }, 'mean')
    expect(e.mean).toBe(2.5)
    expect(e.variance).toBeCloseTo(5 / 3, 12)
  })

  test('validation failures: exposures under 50, a funnel under 5 conversions, a zero baseline', () => {
    expect(validationFailures(funnel('control', 20, 2), funnel('test', 20, 6), 'funnel')).toEqual(['not-enough-exposures', 'not-enough-metric-data'])
    expect(validationFailures(funnel('control', 60, 0), funnel('test', 60, 10), 'funnel')).toEqual(['not-enough-metric-data', 'baseline-mean-is-zero'])
    expect(validationFailures({ key: 'control', number_of_samples: 60, sum: 0, sum_squares: 0 }, { key: 't', number_of_samples: 60, sum: 3, sum_squares: 9 }, 'mean')).toEqual(['baseline-mean-is-zero'])
    expect(validationFailures(funnel('control', 120, 12), funnel('test', 120, 36), 'funnel')).toEqual([])
  })

  test("recommended sample size: Lehr's rule 16 σ² / δ²", () => {
    // p = 0.1, MDE 30 % → δ = 0.03; 16 × 0.09 / 0.0009 = 1600
    expect(recommendedSampleSize(estimate(funnel('control', 1000, 100), 'funnel'), 30)).toBe(1600)
    expect(recommendedSampleSize(estimate(funnel('control', 1000, 100), 'funnel'), null)).toBeNull()
    expect(recommendedSampleSize(estimate(funnel('control', 1000, 0), 'funnel'), 30)).toBeNull()
  })
})
