import { describe, expect, test } from 'bun:test'
import { compilePythonRegex, sanitizeRegexPattern } from './pyregex'
import { REGEX_MAX_SUBJECT_CHARS } from './pyregex-re2'

// What the server does: re.compile(sanitize_regex_pattern(p), re.DOTALL | re.IGNORECASE).search(s).
// Every expectation below was checked against CPython 3.11's `re` (T = match, F = no match,
// ERR = re.error, which the server turns into "false" for regex and not_regex alike).
function server(pattern: string, subject: string): string {
  const r = compilePythonRegex(sanitizeRegexPattern(pattern), { ignoreCase: true, dotAll: true })
  if (!r.ok) return r.reason === 'invalid' ? 'ERR' : r.reason === 'unsupported' ? 'UNSUPPORTED' : 'EXCEPTION'
  return r.regex.test(subject) ? 'T' : 'F'
}

const CASES: [string, string, string][] = [
  // case-insensitive and DOTALL
  ['^.*@posthog\\.com$', 'test@PostHog.com', 'T'],
  ['abc', 'ABC', 'T'],
  ['a.b', 'a\nb', 'T'],
  // a colon anywhere is rewritten by sanitize_regex_pattern, so (?:…) and (?i:…) are errors on the server
  ['(?:ab)+', 'abab', 'ERR'],
  ['(?-i:a)b', 'aB', 'ERR'],
  // Python's $ also matches before a final newline; \Z does not
  ['^.*@posthog\\.com$', 'test@posthog.com\n', 'T'],
  ['^.*@posthog\\.com$', 'test@posthog.com\n\n', 'F'],
  ['\\Aab\\Z', 'ab\n', 'F'],
  ['(?m)^b$', 'a\nb\nc', 'T'],
  ['^b$', 'a\nb\nc', 'F'],
  // Python-only syntax
  ['a{,2}b', 'aab', 'T'],
  ['x{}', 'x{}', 'T'],
  ['x{a}', 'x{a}', 'T'],
  ['(?x) a b # comment', 'ab', 'T'],
  ['(?x)[ ]a', ' a', 'T'],
  ['(?#comment)x', 'x', 'T'],
  ['[]a]', ']', 'T'],
  ['[^]a]', 'b', 'T'],
  ['[\\b]', '\b', 'T'],
  ['\\0', '\u0000', 'T'],
  ['\\012', '\n', 'T'],
  ['\\x41', 'a', 'T'],
  ['\\u00e9', 'É', 'T'],
  ['\\U0001F600', '😀', 'T'],
  // Unicode classes (Python str patterns are Unicode-aware)
  ['\\d+', '١٢٣', 'T'],
  ['\\w+$', 'héllo', 'T'],
  // \b is ASCII in RE2: Python sees no boundary between é and f (a documented difference)
  ['\\bfoo\\b', 'éfoo', 'T'],
  ['\\bfoo\\b', 'a foo.', 'T'],
  ['\\bfoo\\b', 'afoo', 'F'],
  ['(?a)\\w', 'é', 'F'],
  ['\\s', '\u001c', 'T'],
  ['\\s', '\ufeff', 'F'],
  ['\\d', '²', 'F'],
  ['\\w', '²', 'T'],
  ['\\w', '\u0301', 'F'],
  ['[^\\W\\d]', '5', 'F'],
  ['[^\\W\\d]', 'a', 'T'],
  ['\\B', '', 'F'],
  // Python's IGNORECASE equates i, I, İ, ı and k, K (Kelvin sign), s, ſ
  ['i', 'İ', 'T'],
  ['ı', 'I', 'T'],
  ['[a-z]', 'İ', 'T'],
  ['k', '\u212a', 'T'],
  ['s', 'ſ', 'T'],
  // look-behind must be fixed-width in Python
  ['(?<=a+)b', 'ab', 'ERR'],
  ['(?<=ab|c)x', 'cx', 'ERR'],
  // errors Python reports (JS would accept several of these)
  ['[', '[', 'ERR'],
  ['\\q', 'q', 'ERR'],
  ['\\8', '8', 'ERR'],
  ['(a)\\2', 'a', 'ERR'],
  ['a{2,1}', 'aa', 'ERR'],
  ['*a', 'a', 'ERR'],
  ['a**', 'a', 'ERR'],
  ['\\b*', 'b', 'ERR'],
  ['^*', 'a', 'ERR'],
  ['a(?i)b', 'ab', 'ERR'],
  ['(?<n>x)', 'x', 'ERR'],
  ['(?P<a>x)(?P<a>y)', 'xy', 'ERR'],
  ['(?L)a', 'a', 'ERR'],
  ['(?au)a', 'a', 'ERR'],
  ['(?-:a)', 'a', 'ERR'],
  ['[z-a]', 'a', 'ERR'],
  ['[a-\\d]', '-', 'ERR'],
  ['\\x4', 'x', 'ERR'],
  ['(a', 'a', 'ERR'],
  ['a)', 'a', 'ERR'],
  ['a\\', 'a', 'ERR'],
  ['(?x)#\\', 'a', 'ERR'],
  // sanitize_regex_pattern rewrites "key":"value" into a lookahead that accepts Python dict spelling
  ['"key":"value"', "{'key': 'value'}", 'T'],
  ['"key":"value"', '{"key":"value"}', 'T'],
  ['"k":"v"[^}]*"k2":"v2"', '{"k2": "v2", "k": "v"}', 'T'],
  ['"a.b":"c"', "{'aXb': 'c'}", 'F'],
  ['a:b', 'a : b', 'T'],
  ['"a"', 'zzz', 'T'], // no key:value pair: the piece is dropped and the empty pattern matches
]

describe('Python regex semantics (server regex / not_regex)', () => {
  for (const [pattern, subject, expected] of CASES) {
    test(`${JSON.stringify(pattern)} on ${JSON.stringify(subject)} → ${expected}`, () => {
      expect(server(pattern, subject)).toBe(expected)
    })
  }

  test('conditional groups and \\N{...} have no JS equivalent: reported as unsupported', () => {
    expect(server('(a)?(?(1)b|c)', 'c')).toBe('UNSUPPORTED')
    expect(server('\\N{LATIN SMALL LETTER A}', 'a')).toBe('UNSUPPORTED')
  })

  test('a repeat count of 2**32-1 or more raises OverflowError in Python (not re.error)', () => {
    expect(server('a{4294967295}', 'a')).toBe('EXCEPTION')
  })

  test('global (?a) together with (?u) raises ValueError in Python (not re.error)', () => {
    expect(server('(?a)(?u)x', 'x')).toBe('EXCEPTION')
  })
})

describe('scoped flags (without sanitize, which would rewrite their colon)', () => {
  const run = (p: string, s: string) => {
    const r = compilePythonRegex(p, { ignoreCase: true, dotAll: true })
    return r.ok ? r.regex.test(s) : r.reason
  }
  test('(?-s:…) turns DOTALL off, (?-i:…) turns IGNORECASE off, (?m:…) makes ^/$ line anchors', () => {
    expect(run('(?-s:a.b)', 'a\nb')).toBe(false)
    expect(run('(?-i:a)b', 'AB')).toBe(false)
    expect(run('(?-i:a)b', 'aB')).toBe(true)
    expect(run('(?m:^b$)', 'a\nb\nc')).toBe(true)
    expect(run('(?x:a b)', 'ab')).toBe(true)
  })
})

describe('sanitizeRegexPattern (sanitize_regex_pattern)', () => {
  test('leaves patterns without quotes or colons alone', () => {
    expect(sanitizeRegexPattern('^abc.*$')).toBe('^abc.*$')
  })
  test('a colon without quotes only gains optional whitespace', () => {
    expect(sanitizeRegexPattern('a:b')).toBe('a\\s*:\\s*b')
  })
  test('a key/value pair becomes a lookahead with the key escaped like re.escape', () => {
    expect(sanitizeRegexPattern('"a.b":"c"')).toBe(`(?=.*['"]?a\\.b['"]?\\s*:\\s*['"]?c['"]?)`)
  })
  test('escaped quotes match either quote style; a quoted piece without a "key":"value" pair is dropped', () => {
    expect(sanitizeRegexPattern('\\"x\\":"1"')).toBe(`(?=.*['"]?x['"]?\\s*:\\s*['"]?1['"]?)`)
    expect(sanitizeRegexPattern('\\"x\\":1')).toBe('')
    expect(sanitizeRegexPattern("it's")).toBe("it's")
  })
})

describe('linear-time engine: what RE2 cannot run is refused by name', () => {
  const compile = (p: string) => compilePythonRegex(p, { ignoreCase: true, dotAll: true })
  const refused: [string, string][] = [
    ['(?P<x>a)(?P=x)', 'backreferences'],
    ['(a)\\1', 'backreferences'],
    ['(?<=ab|cd)x', 'lookbehind'],
    ['(?<!a)b', 'lookbehind'],
    ['a(?=b)', 'lookahead'],
    ['(?!a)b', 'lookahead'],
    ['(?=.*a)b', 'lookahead'], // a condition followed by more pattern, not anchored: position matters
    ['(?>a+)a', 'atomic groups'],
    ['a++a', 'possessive quantifiers'],
    ['a*+b', 'possessive quantifiers'],
    ['a{1001}', 'repeat counts above 1000'],
    ['(a)?(?(1)b|c)', 'conditional groups'],
    ['\\N{LATIN SMALL LETTER A}', 'named characters'],
  ]
  for (const [pattern, construct] of refused) {
    test(`${JSON.stringify(pattern)} → unsupported, naming ${construct}`, () => {
      const r = compile(pattern)
      expect(r.ok).toBe(false)
      if (!r.ok) {
        expect(r.reason).toBe('unsupported')
        expect(r.message).toContain(construct)
      }
    })
  }

  test('nested quantifiers are answered, not backtracked', () => {
    const r = compile('^(a+)+$')
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.regex.test('a'.repeat(5000) + '!')).toBe(false)
    expect(r.regex.test('a'.repeat(5000))).toBe(true)
    const email = compile('^([a-zA-Z0-9_.-]+)+@example\\.com$')
    expect(email.ok && email.regex.test('x'.repeat(5000) + '@example.org')).toBe(false)
    expect(email.ok && email.regex.test('john.doe@EXAMPLE.com')).toBe(true)
  })

  test('(?=.*X) conditions at the start are kept: each must occur somewhere', () => {
    const password = compile('^(?=.*\\d)(?=.*[a-z]).{8,}$')
    expect(password.ok).toBe(true)
    if (!password.ok) return
    expect(password.regex.test('abcdefg1')).toBe(true)
    expect(password.regex.test('abcdefgh')).toBe(false)
    expect(password.regex.test('1234567')).toBe(false)
    const only = compile('(?=.*b)(?=.*a)')
    expect(only.ok && only.regex.test('xxbxxa')).toBe(true)
    expect(only.ok && only.regex.test('xxbxx')).toBe(false)
  })

  test('values longer than the cap match neither regex nor not_regex', () => {
    const r = compile('a')
    expect(r.ok && r.regex.test('a'.repeat(REGEX_MAX_SUBJECT_CHARS))).toBe(true)
    expect(r.ok && r.regex.test('a'.repeat(REGEX_MAX_SUBJECT_CHARS + 1))).toBe(false)
  })

  test('translation to RE2 syntax', () => {
    const src = (p: string) => {
      const r = compilePythonRegex(p, { ignoreCase: false, dotAll: false })
      return r.ok ? r.source : r.reason
    }
    expect(src('(?P<name>ab)')).toBe('(ab)')
    expect(src('^a.b$')).toBe('\\Aa[^\\n]b(?:\\n?\\z)')
    expect(src('(?s)a.b\\Z')).toBe('a(?s:.)b\\z')
    expect(src('(?m)^a$')).toBe('(?m:^)a(?m:$)')
    expect(src('\\d\\w\\s')).toBe('[\\p{Nd}][\\p{L}\\p{N}_][\\x{9}-\\x{d}\\x{1c}-\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}-\\x{2029}\\x{202f}\\x{205f}\\x{3000}]')
    expect(src('(?a)[\\W\\d]')).toBe('[[:^word:]0-9]')
    expect(src('é+?')).toBe('(?:\\x{e9})+?')
    expect(src('a{,2}')).toBe('(?:a){0,2}')
  })
})
