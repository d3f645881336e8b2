// The flags a survey owns: keys as PostHog makes them, the internal flag's person properties per iteration, and
// the iterations laid out from the launch.
import { expect, test } from 'bun:test'
import { currentIteration, internalTargetingFilters, iterationStartDates, surveyPropertySuffix, targetingFlagKey } from './targeting'

test('keys: survey-targeting-<hash>, the internal one -custom; fresh every time', () => {
  expect(targetingFlagKey(false)).toMatch(/^survey-targeting-[0-9a-f]{12}$/)
  expect(targetingFlagKey(true)).toMatch(/^survey-targeting-[0-9a-f]{12}-custom$/)
  expect(targetingFlagKey(false)).not.toBe(targetingFlagKey(false))
})

test('the internal flag: neither dismissed nor answered, in this iteration when iterations are on', () => {
  expect(surveyPropertySuffix('s1', null, null)).toBe('s1')
  expect(surveyPropertySuffix('s1', 0, 1)).toBe('s1')
  expect(surveyPropertySuffix('s1', 3, 2)).toBe('s1/2')
  expect(internalTargetingFilters('s1/2').groups[0]!.properties.map((p) => [p.key, p.operator])).toEqual([
    ['$survey_dismissed/s1/2', 'is_not_set'],
    ['$survey_responded/s1/2', 'is_not_set'],
  ])
})

test('iterations: start dates every N days from the launch; the current one at a time', () => {
  const start = new Date('2026-01-01T00:00:00Z')
  const dates = iterationStartDates(start, 3, 30)
  expect(dates).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-31T00:00:00.000Z', '2026-03-02T00:00:00.000Z'])
  expect(currentIteration(dates, Date.parse('2025-12-31T00:00:00Z'))).toBeNull()
  expect(currentIteration(dates, Date.parse('2026-02-10T00:00:00Z'))).toEqual({ iteration: 2, start: new Date('2026-01-31T00:00:00Z') })
  expect(currentIteration(dates, Date.parse('2027-01-01T00:00:00Z'))?.iteration).toBe(3)
})
