import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { flagHash, hashString, holdoutHash } from './hash'

// PostHog's published hash vectors (exact floats, compared with toBe) and its holdout anchors.
const TABLE: [string, number][] = [
  ['beta-feature.example_id', 0.2093039334578348],
  ['beta-feature.another_id', 0.9656963840044174],
  ['beta-feature.other_id', 0.4345580748910055],
  ['beta-feature.test_id', 0.9417728557208149],
  ['beta-feature.example_idvariant', 0.6363703338989186],
  ['beta-feature.test_idvariant', 0.7786746491848937],
  ['beta-feature.another_idvariant', 0.5238484260433839],
  ['beta-feature.11variant', 0.16089093725845727],
  ['beta-feature.3variant', 0.9964296102915623],
  ['beta-feature.1', 0.5923350450953002],
  ['beta-feature.4', 0.1807335783429004],
  ['beta-feature.random_id_without_rollout', 0.36430248239365026],
  ['beta-feature.random_id_within_rollout', 0.9549978787140011],
  ['multivariate-flag.example_id', 0.6944702504901665],
  ['multivariate-flag.example_idvariant', 0.4099865814300066],
  ['multivariate-flag.other_idvariant', 0.9412364075823207],
  ['group-flag.amazon_without_rollout', 0.30897111071897326],
  ['group-flag.amazon', 0.5432523073764106],
  ['complex-flag.some-distinct-id_within_rollout?', 0.003447084433165693],
  ['complex-flag.some-distinct-id_outside_rollout?', 0.5921323433724439],
  ['beta-feature-local.distinct_id', 0.06286527620108802],
  ['beta-feature-local.distinct_idvariant', 0.808587163725284],
  ['flag-with-gt-filter.example_idvariant', 0.615246946738473],
  ['other-flag-with-gt-filter.example_idvariant', 0.9303303130747804],
  ['simple-flag.distinct_id_0', 0.7836963764220432],
  ['simple-flag.distinct_id_1', 0.3397069926995401],
  ['holdout-example_id', 0.9402003475831224],
  ['holdout-example_id2', 0.6292740389966519],
  ['holdout-some_distinct_id', 0.7270002403585725],
  ['holdout-test-identifier', 0.4493881716040236],
]

describe('hash', () => {
  for (const [s, value] of TABLE) {
    test(`hash("${s}") is exactly ${value}`, () => {
      expect(hashString(s)).toBe(value)
    })
  }

  test('flagHash assembles `${key}.${identifier}${salt}`', () => {
    expect(flagHash('beta-feature', 'example_id')).toBe(0.2093039334578348)
    expect(flagHash('beta-feature', 'example_id', 'variant')).toBe(0.6363703338989186)
    expect(flagHash('multivariate-flag', 'other_id', 'variant')).toBe(0.9412364075823207)
    expect(flagHash('group-flag', 'amazon')).toBe(0.5432523073764106)
  })

  test('holdoutHash is `holdout-${identifier}`, independent of the flag', () => {
    expect(holdoutHash('example_id')).toBe(0.9402003475831224)
    expect(holdoutHash('example_id2')).toBe(0.6292740389966519)
  })

  test('matches int(hex[:15], 16) / 2**60 computed with BigInt, for ASCII and non-ASCII (UTF-8) input', () => {
    const inputs = ['a.b', 'flag.ünïcødé', 'flag.😀user', 'k.' + 'x'.repeat(500), 'k.', '.']
    for (let i = 0; i < 2000; i++) inputs.push(`f${i}.id-${(i * 7919) % 104729}é`)
    for (const s of inputs) {
      const hex = createHash('sha1').update(s, 'utf8').digest('hex')
      const expected = Number(BigInt('0x' + hex.slice(0, 15))) / 0xfffffffffffffff
      expect(hashString(s)).toBe(expected)
    }
  })

  test('values lie in [0, 1]', () => {
    for (let i = 0; i < 1000; i++) {
      const h = flagHash('k', String(i))
      expect(h).toBeGreaterThanOrEqual(0)
      expect(h).toBeLessThanOrEqual(1)
    }
  })
})
