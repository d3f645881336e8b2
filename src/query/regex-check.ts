// extract()'s and match()'s regular expressions, checked before they reach a store.
import { QueryError } from './errors'

/**
 * A regular expression for extract() or match() (`fn`), checked before it reaches a store: both stores that run it
 * use RE2 (linear in the text, no backtracking), and what RE2 has no meaning for is refused here by name
 * (back-references, look-around, possessive or atomic groups); counted repetitions are at most 1000 (RE2's own
 * bound) and the pattern 1000 characters. Answers how many capturing groups it has.
 */
export function checkRegex(pattern: string, fn = 'extract'): number {
  const refuse = (why: string): never => {
    throw new QueryError(`${fn}(): the regular expression ${why}`)
  }
  if (pattern.length > 1000) refuse('is longer than 1000 characters')
  let groups = 0
  let inClass = false
  /** groups open: RE2 refuses an expression whose parentheses do not pair, as the stores would (their words) */
  let open = 0
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\') {
      const next = pattern[i + 1]
      if (next === undefined) refuse('ends with a lone \\')
      if (!inClass && /[1-9]/.test(next)) refuse(`refers back to a group (\\${next}): RE2 has no back-references`)
      if (next === 'Q') {
        // \Q…\E: literal text
        const end = pattern.indexOf('\\E', i + 2)
        i = end === -1 ? pattern.length : end + 1
        continue
      }
      i++
      continue
    }
    if (inClass) {
      if (c === '[' && pattern[i + 1] === ':') {
        const end = pattern.indexOf(':]', i + 2)
        if (end !== -1) i = end + 1
      } else if (c === ']') inClass = false
      continue
    }
    if (c === '[') {
      inClass = true
      // a ] right after [ or [^ is a character of the class
      if (pattern[i + 1] === '^') i++
      if (pattern[i + 1] === ']') i++
      continue
    }
    if (c === ')') {
      if (--open < 0) refuse('closes a group it did not open')
      continue
    }
    if (c === '(') {
      open++
      if (pattern[i + 1] !== '?') {
        groups++
        continue
      }
      const rest = pattern.slice(i + 2, i + 4)
      if (rest.startsWith('=') || rest.startsWith('!') || rest === '<=' || rest === '<!') refuse('looks around ((?=, (?!, (?<=, (?<!): RE2 does not')
      if (rest.startsWith('>')) refuse('holds an atomic group (?>: RE2 has none')
      if (rest === 'P=' || rest === 'P>' || rest.startsWith('R') || /^[0-9+-]/.test(rest)) refuse('refers back to a group: RE2 has no back-references or recursion')
      // (?P<name>…) and (?<name>…) capture; (?:…) and flags (?i) do not
      if (rest === 'P<' || (rest.startsWith('<') && rest !== '<=' && rest !== '<!')) groups++
      continue
    }
    if ((c === '*' || c === '+' || c === '?' || c === '}') && pattern[i + 1] === '+') refuse('has a possessive quantifier (…+): RE2 has none')
    if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i))
      if (m && (Number(m[1]) > 1000 || (m[2] && Number(m[2]) > 1000))) refuse('repeats something more than 1000 times')
    }
  }
  if (inClass) refuse('leaves a [ unclosed')
  if (open > 0) refuse('leaves a ( unclosed')
  return groups
}
