// What the surveys API refuses and what it rewrites: each refusal names its member; HTML is sanitised, never passed.
import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { sanitizeHtml } from './sanitize'
import { checkTargetingFilters, validateSurveyBody } from './validation'

const LIMITS = { maxQuestions: 50, maxChoices: 100, maxBytes: 65_536 }
const refusal = (body: unknown, method: 'POST' | 'PATCH' = 'POST'): { code: string; attr: string | null } => {
  try {
    validateSurveyBody(body, method, LIMITS)
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError)
    return { code: (error as ApiError).code, attr: (error as ApiError).attr }
  }
  throw new Error(`not refused: ${JSON.stringify(body).slice(0, 200)}`)
}
const base = { name: 'S', type: 'popover' }

describe('survey validation', () => {
  test('a whole survey passes, ids made for questions without one', () => {
    const input = validateSurveyBody({
      ...base,
      schedule: 'recurring',
      questions: [
        { type: 'rating', question: 'NPS', scale: 10, display: 'number', branching: { type: 'response_based', responseValues: { detractors: 1, promoters: 'end' } } },
        { type: 'multiple_choice', question: 'Which?', choices: ['a', 'b'], hasOpenChoice: true, shuffleOptions: true, branching: { type: 'specific_question', index: 2 } },
        { type: 'link', question: 'Book', link: 'mailto:team@example.com' },
      ],
      conditions: { url: 'pricing', urlMatchType: 'icontains', deviceTypes: ['Desktop'], deviceTypesMatchType: 'exact', seenSurveyWaitPeriodInDays: 7, events: { repeatedActivation: true, values: [{ name: 'checkout', propertyFilters: { plan: { values: ['pro'], operator: 'exact' } } }] }, actions: { values: [{ id: 3 }] }, linkedFlagVariant: 'test' },
      appearance: { backgroundColor: '#eee', position: 'right', surveyPopupDelaySeconds: 5, whiteLabel: true },
      iteration_count: 3,
      iteration_frequency_days: 30,
    }, 'POST', LIMITS)
    expect(input.questions!.every((q) => typeof q.id === 'string')).toBe(true)
    expect(input.actionIds).toEqual([3])
  })

  test('each refusal names its member', () => {
    expect(refusal({ type: 'popover' })).toMatchObject({ attr: 'name' })
    expect(refusal({ name: 'S' })).toMatchObject({ attr: 'type' })
    expect(refusal({ ...base, type: 'modal' })).toMatchObject({ code: 'invalid_choice', attr: 'type' })
    expect(refusal({ ...base, schedule: 'weekly' })).toMatchObject({ attr: 'schedule' })
    expect(refusal({ ...base, questions: [{ type: 'essay', question: 'a' }] })).toMatchObject({ attr: 'questions__0__type' })
    expect(refusal({ ...base, questions: [{ type: 'open', question: '' }] })).toMatchObject({ attr: 'questions__0__question' })
    expect(refusal({ ...base, questions: [{ type: 'rating', question: 'a', scale: 4 }] })).toMatchObject({ attr: 'questions__0__scale' })
    expect(refusal({ ...base, questions: [{ type: 'rating', question: 'a', display: 'stars' }] })).toMatchObject({ attr: 'questions__0__display' })
    expect(refusal({ ...base, questions: [{ type: 'single_choice', question: 'a', choices: [] }] })).toMatchObject({ attr: 'questions__0__choices' })
    expect(refusal({ ...base, questions: [{ type: 'single_choice', question: 'a', choices: Array(101).fill('x') }] })).toMatchObject({ code: 'limit_exceeded' })
    expect(refusal({ ...base, questions: [{ type: 'open', question: 'a', branching: { type: 'specific_question', index: 1 } }] })).toMatchObject({ attr: 'questions__0__branching__index' })
    expect(refusal({ ...base, questions: [{ type: 'open', question: 'a' }, { type: 'open', question: 'b', branching: { type: 'specific_question', index: 0 } }] })).toMatchObject({ attr: 'questions__1__branching__index' })
    expect(refusal({ ...base, questions: [{ type: 'open', question: 'a', branching: { type: 'response_based', responseValues: {} } }] })).toMatchObject({ attr: 'questions__0__branching__type' })
    expect(refusal({ ...base, questions: [{ type: 'open', question: 'a', id: 'x' }, { type: 'open', question: 'b', id: 'x' }] })).toMatchObject({ attr: 'questions' })
    expect(refusal({ ...base, conditions: { urlMatchType: 'glob' } })).toMatchObject({ attr: 'conditions__urlMatchType' })
    expect(refusal({ ...base, conditions: { deviceTypes: ['Fridge'] } })).toMatchObject({ attr: 'conditions__deviceTypes__0' })
    expect(refusal({ ...base, conditions: { seenSurveyWaitPeriodInDays: -1 } })).toMatchObject({ attr: 'conditions__seenSurveyWaitPeriodInDays' })
    expect(refusal({ ...base, conditions: { actions: { values: [{ id: 'x' }] } } })).toMatchObject({ attr: 'conditions__actions__values__0__id' })
    expect(refusal({ ...base, appearance: { sparkles: true } })).toMatchObject({ attr: 'appearance__sparkles' })
    expect(refusal({ ...base, appearance: { position: 'nowhere' } })).toMatchObject({ attr: 'appearance__position' })
    expect(refusal({ ...base, appearance: { backgroundColor: 'url(https://evil/x.png)' } })).toMatchObject({ attr: 'appearance__backgroundColor' })
    expect(refusal({ ...base, appearance: { fontFamily: 'a;}body{x' } })).toMatchObject({ attr: 'appearance__fontFamily' })
    expect(refusal({ ...base, start_date: 'soon' })).toMatchObject({ attr: 'start_date' })
    expect(refusal({ ...base, iteration_count: 10_000 })).toMatchObject({ attr: 'iteration_count' })
    expect(refusal({ ...base, targeting_flag_filters: [] })).toMatchObject({ attr: 'targeting_flag_filters' })
    expect(refusal('nope')).toMatchObject({ code: 'parse_error' })
    // members posthog-js would read that the sanitiser does not see are refused, not stored
    expect(refusal({ ...base, questions: [{ type: 'open', question: 'a', translations: { fr: { question: '<img src=x onerror=alert(1)>' } } }] })).toMatchObject({ attr: 'questions__0__translations' })
    expect(refusal({ ...base, conditions: { urlRegex: '.*' } })).toMatchObject({ attr: 'conditions__urlRegex' })
  })

  test('a survey with 1,000 questions is refused before anything else is read', () => {
    const questions = Array.from({ length: 1000 }, (_, i) => ({ type: 'open', question: `Q${i}` }))
    expect(refusal({ ...base, questions })).toMatchObject({ code: 'limit_exceeded', attr: 'questions' })
  })

  test('the bytes of a survey are bounded', () => {
    const questions = Array.from({ length: 50 }, () => ({ type: 'open', question: 'x'.repeat(2000) }))
    expect(refusal({ ...base, questions })).toMatchObject({ code: 'limit_exceeded' })
  })

  test('links: https and mailto only', () => {
    for (const link of ['javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:alert(1)', 'http://example.com', 'data:text/html,<script>', 'https://exa mple.com', '//evil.example', 'vbscript:x']) {
      expect(refusal({ ...base, questions: [{ type: 'link', question: 'a', link }] })).toMatchObject({ attr: 'questions__0__link' })
    }
    expect(refusal({ ...base, questions: [{ type: 'open', question: 'a', link: 'https://x.example' }] })).toMatchObject({ attr: 'questions__0__link' })
  })

  test('targeting filters: a full rollout with no properties is refused', () => {
    expect(() => checkTargetingFilters({ groups: [{ properties: [], rollout_percentage: 100 }] })).toThrow(ApiError)
    expect(() => checkTargetingFilters({ groups: [{ properties: [] }] })).toThrow(ApiError)
    expect(() => checkTargetingFilters({ groups: [] })).toThrow(ApiError)
    expect(() => checkTargetingFilters({ groups: [{ properties: [], rollout_percentage: 20 }] })).not.toThrow()
    expect(() => checkTargetingFilters({ groups: [{ properties: [{ key: 'a', value: 'b' }], rollout_percentage: 100 }] })).not.toThrow()
  })
})

describe('the HTML sanitiser', () => {
  const cases: [string, string][] = [
    ['plain text', 'plain text'],
    ['<b>bold</b> and <i>it</i>', '<b>bold</b> and <i>it</i>'],
    ['<script>alert(1)</script>after', 'after'],
    ['<SCRIPT SRC=//evil/x.js></SCRIPT>ok', 'ok'],
    ['<img src=x onerror=alert(1)>', ''],
    ['<b onclick="alert(1)" style="x">b</b>', '<b>b</b>'],
    ['<a href="javascript:alert(1)">x</a>', '<a>x</a>'],
    ['<a href="jav&#x61;script:alert(1)">x</a>', '<a>x</a>'],
    ['<a href=" https://ok.example/?a=1&b=2">x</a>', '<a href="https://ok.example/?a=1&amp;b=2" rel="noopener noreferrer">x</a>'],
    ['<a href="mailto:a@b.c" target="_blank">m</a>', '<a href="mailto:a@b.c" rel="noopener noreferrer">m</a>'],
    ['<a href="https://x.example/" onmouseover="alert(1)">x</a>', '<a href="https://x.example/" rel="noopener noreferrer">x</a>'],
    ['<iframe src="https://evil"></iframe>text', 'text'],
    ['<svg><script>alert(1)</script></svg>', ''],
    ['<style>body{display:none}</style>', ''],
    ['a < b & c > d', 'a &lt; b &amp; c &gt; d'],
    ['&lt;script&gt; stays text', '&lt;script&gt; stays text'],
    ['<!-- hidden --><p>p</p>', '<p>p</p>'],
    ['<p><b>unclosed', '<p><b>unclosed</b></p>'],
    ['</p>stray close', 'stray close'],
    ['<b><i>x</b></i>', '<b><i>x</i></b>'],
    ['<<script>script>alert(1)<</script>/script>', '&lt;/script&gt;'],
    ['<p title="x"onclick=alert(1)>x</p>', '&lt;p title=&quot;x&quot;onclick=alert(1)&gt;x'],
    ['"quoted"', '&quot;quoted&quot;'],
    ['<math><mi xlink:href="javascript:alert(1)">x</mi></math>', ''],
    ['<br/><hr>', '<br><hr>'],
  ]
  for (const [input, output] of cases) test(JSON.stringify(input).slice(0, 60), () => expect(sanitizeHtml(input)).toBe(output))

  test('deep nesting is bounded and the output never carries a tag it did not write', () => {
    const deep = '<b>'.repeat(10_000) + 'x'
    const out = sanitizeHtml(deep)
    expect(out.match(/<b>/g)!.length).toBe(64)
    const hostile = '<div><a href="https://x" onclick=1><img/src/onerror=alert(1)><svg/onload=alert(1)>'
    const out2 = sanitizeHtml(hostile)
    expect(out2).toBe('<div><a href="https://x" rel="noopener noreferrer">&lt;img/src/onerror=alert(1)&gt;&lt;svg/onload=alert(1)&gt;</a></div>')
    // every `<` left opens or closes an allowed tag without attributes (a link's href and rel aside)
    expect(out2.replace(/<a href="[^"]*" rel="noopener noreferrer">/g, '')).not.toMatch(/<(?!\/?(?:div|a|b)>)/)
  })
})
