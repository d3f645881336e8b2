import { describe, expect, test } from 'bun:test'
import { intervalText, notEnoughData, resultRows, valueText } from './results'

describe("an experiment's results as rows", () => {
  test('conversion, chance to win and the interval per variant, the control first', () => {
    const rows = resultRows(
      {
        baseline: { key: 'control', number_of_samples: 120, sum: 12 },
        variant_results: [{ key: 'test', number_of_samples: 120, sum: 36, chance_to_win: 0.985, credible_interval: [0.2, 3.8], significant: true, validation_failures: [] }],
      },
      'funnel',
    )
    expect(rows).toEqual([
      { variant: 'control', exposures: 120, value: '10% (12 / 120)', chanceToWin: '—', interval: '—', verdict: '—' },
      { variant: 'test', exposures: 120, value: '30% (36 / 120)', chanceToWin: '98.5%', interval: '+20% to +380%', verdict: 'Significant' },
    ])
  })

  test('a mean, a p-value, and no samples', () => {
    expect(valueText({ key: 'x', number_of_samples: 3, sum: 10 }, 'mean')).toBe('3.333')
    expect(valueText({ key: 'x', number_of_samples: 0, sum: 0 }, 'mean')).toBe('—')
    const rows = resultRows({ baseline: { key: 'control', number_of_samples: 2, sum: 2 }, variant_results: [{ key: 'b', number_of_samples: 2, sum: 4, p_value: 0.0312, confidence_interval: [-0.125, 0.4] }] }, 'mean')
    expect(rows[1].chanceToWin).toBe('p = 0.0312')
    expect(rows[1].verdict).toBe('—')
    expect(resultRows({ baseline: { key: 'control', number_of_samples: 2, sum: 2 }, variant_results: [{ key: 'b', number_of_samples: 2, sum: 4, significant: false, validation_failures: [] }] }, 'mean')[1].verdict).toBe('Not significant')
    expect(intervalText([-0.125, 0.4])).toBe('-12.5% to +40%')
    expect(intervalText(null)).toBe('—')
  })

  test('why there are no statistics yet, in words, once each', () => {
    const reasons = notEnoughData({
      baseline: { key: 'control', number_of_samples: 3, sum: 0 },
      variant_results: [
        { key: 'a', number_of_samples: 2, sum: 0, validation_failures: ['not-enough-exposures', 'baseline-mean-is-zero'] },
        { key: 'b', number_of_samples: 2, sum: 0, validation_failures: ['not-enough-exposures'] },
      ],
    })
    expect(reasons).toEqual(['fewer than 50 persons were exposed to the control or this variant', "the control's metric is still zero"])
  })
})
