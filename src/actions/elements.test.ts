// The element expressions against chains as posthog-js writes them, run by RE2 (re2js: the engine's syntax and
// semantics, as ClickHouse's match() and DuckDB's regexp_matches run them), and checked as HogQL's match() checks.
import { describe, expect, test } from 'bun:test'
import { RE2JS } from 're2js'
import { checkRegex } from '../query/regex-check'
import { chainKeyRegex, regexEscaped, selectorRegex, tagNameRegex } from './elements'

const CLICK = 'button.btn.pay:attr__class="btn pay"attr__id="pay-btn"attr_id="pay-btn"nth-child="2"nth-of-type="1"text="Pay now";form.checkout:attr__class="checkout"nth-child="1"nth-of-type="1";div.main:nth-child="1"nth-of-type="1"'
const LINK = 'a.nav:attr__href="/docs/intro?a=1"href="/docs/intro?a=1"nth-child="3"nth-of-type="1"text="Say \\"hi\\"";nav:nth-child="1"nth-of-type="1"'

const matches = (regex: string, chain: string) => {
  checkRegex(regex, 'match')
  return RE2JS.compile(regex, RE2JS.DOTALL).matcher(chain).find()
}

describe('element parts as regular expressions over $elements_chain', () => {
  test('selectors: tags, classes (in any order), #id, [attributes], children and descendants', () => {
    const cases: [string, string, boolean][] = [
      ['button', CLICK, true],
      ['button.pay', CLICK, true],
      ['.pay.btn', CLICK, true],
      ['button.pa', CLICK, false],
      ['button.btn.pay.other', CLICK, false],
      ['#pay-btn', CLICK, true],
      ['button#pay', CLICK, false],
      ['[nth-child="2"]', CLICK, true],
      ['form > button', CLICK, true],
      ['div > button', CLICK, false],
      ['div button', CLICK, true],
      ['div form button.pay', CLICK, true],
      ['form', CLICK, true],
      ['main', CLICK, false],
      ['nav > a.nav', LINK, true],
      ['a[href="/docs/intro?a=1"]', LINK, true],
      ['nav > * > a', LINK, true],
      ['span', LINK, false],
    ]
    for (const [selector, chain, expected] of cases) expect([selector, matches(selectorRegex(selector), chain)]).toEqual([selector, expected])
  })

  test('tag names whole, href and text exact, contains (any case) or by regex', () => {
    expect(matches(tagNameRegex('form'), CLICK)).toBe(true)
    expect(matches(tagNameRegex('for'), CLICK)).toBe(false)
    expect(matches(tagNameRegex('a'), LINK)).toBe(true)
    expect(matches(chainKeyRegex('href', '/docs/intro?a=1', 'exact'), LINK)).toBe(true)
    expect(matches(chainKeyRegex('href', '/docs/intro', 'exact'), LINK)).toBe(false)
    expect(matches(chainKeyRegex('href', '/DOCS/', 'contains'), LINK)).toBe(true)
    // the expression sits between the quotes: the whole value
    expect(matches(chainKeyRegex('href', '/docs/[a-z]+', 'regex'), LINK)).toBe(false)
    expect(matches(chainKeyRegex('href', '/docs/[a-z]+.a=[0-9]', 'regex'), LINK)).toBe(true)
    expect(matches(chainKeyRegex('text', 'Say "hi"', 'exact'), LINK)).toBe(true)
    expect(matches(chainKeyRegex('text', 'pay', 'contains'), CLICK)).toBe(true)
  })

  test('what a user writes is matched as itself, never as an expression', () => {
    const hostile = '(a+)+$|.*[x]{1000}\\'
    expect(RE2JS.compile(regexEscaped(hostile)).matcher(`x${hostile}y`).find()).toBe(true)
    expect(() => checkRegex(selectorRegex(`div.${hostile} > a[href="${hostile}"]`), 'match')).not.toThrow()
  })
})
