// An action step's element parts (`href`, `tag_name`, `selector`) as regular expressions over the event's
// `$elements_chain` property: the autocaptured element and its ancestors as posthog-js writes them when the
// remote config asks for `elementsChainAsString` (phog's does), e.g.
//   button.btn.buy:attr__class="btn buy"nth-child="2"nth-of-type="1"text="Buy now";div.card:nth-child="1"…
// each element `tag.class…:` then its attributes `key="value"` sorted by key, quotes in values written \", elements
// from the clicked one outwards joined by `;`. href, text and tag_name are PostHog's expressions (its action HogQL);
// a selector is matched element by element (see selectorRegex). They run through HogQL's match() (RE2), which the
// embedded SQLite store lacks (it refuses them, naming the stores that have it).
import { prop, str } from '../lib/hogql-text'

const CHAIN = prop('$elements_chain')

/** Every character RE2 gives a meaning to, escaped: the text matched as itself. */
export function regexEscaped(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|\n\r\t\0]/g, (c) => ({ '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\x00' })[c] ?? `\\${c}`)
}

/** The chain holds `key="value"` matched as `matching` says (PostHog's element_chain_key_filter). */
export function chainKeyRegex(key: 'href' | 'text', value: string, matching: string | null | undefined): string {
  const escaped = value.replace(/"/g, '\\"')
  if (matching === 'regex') return `(${key}="${escaped}")`
  // contains is case-insensitive here, as PostHog's (=~* over the chain)
  if (matching === 'contains') return `(?i)(${key}="[^"]*${regexEscaped(escaped)}[^"]*")`
  return `(${key}="${regexEscaped(escaped)}")`
}

/** An element of this tag anywhere in the chain. */
export function tagNameRegex(tagName: string): string {
  return `(^|;)${regexEscaped(tagName)}(\\.|$|;|:)`
}

interface SelectorPart {
  tag: string | null
  classes: string[]
  /** attribute name → value, matched as the chain writes them (sorted by name) */
  attributes: Map<string, string>
}

/** A selector split at spaces outside [attribute] brackets and quotes. */
function splitSelector(selector: string): string[] {
  const parts: string[] = []
  let part = ''
  let inAttribute = false
  let quote: string | null = null
  for (const c of selector) {
    if (c === '[' && quote === null) inAttribute = true
    if (c === ']' && quote === null) inAttribute = false
    if (c === '"' || c === "'") quote = quote === null ? c : quote === c ? null : quote
    if (c === ' ' && !inAttribute) {
      parts.push(part)
      part = ''
    } else part += c
  }
  parts.push(part)
  return parts
}

function selectorPart(text: string): SelectorPart {
  const part: SelectorPart = { tag: null, classes: [], attributes: new Map() }
  let tag = text
  const attribute = /^(.*?)\[(.*?)=['"|](.*?)['"|]\]/.exec(tag)
  if (attribute) {
    part.attributes.set(attribute[2] === 'id' ? 'attr_id' : attribute[2], attribute[3])
    tag = attribute[1]
  }
  if (tag.includes(':nth-child(')) {
    const [before, after] = tag.split(':nth-child(')
    part.attributes.set('nth-child', after.replace(')', ''))
    tag = before
  }
  if (tag.includes('#')) {
    const [before, id] = tag.split('#')
    part.attributes.set('attr_id', id)
    tag = before
  }
  if (tag.includes('.')) {
    const [before, ...classes] = tag.split('.')
    part.classes = classes
    tag = before
  }
  if (tag !== '' && tag !== '*') part.tag = tag
  return part
}

/** One element of the chain matching a selector's part: its tag, every class, every attribute (sorted, as written). */
function elementRegex(part: SelectorPart): string {
  let regex = `(?:^|;)${part.tag === null ? '[^.:;]*' : regexEscaped(part.tag)}`
  for (const name of [...part.classes].sort()) regex += `(?:\\.[^.:;]*)*?\\.${regexEscaped(name)}`
  regex += '(?:\\.[^.:;]*)*:'
  for (const [key, value] of [...part.attributes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) regex += `[^;]*?${regexEscaped(key)}="${regexEscaped(value)}"`
  return `${regex}[^;]*`
}

/**
 * A CSS selector (tags, .classes, #id, [attr="value"], :nth-child(n), descendants and `>` children) as a regular
 * expression over the chain: its parts from the clicked element outwards, each one whole element, a `>` child's
 * parent the next element, another ancestor any later one. The selector may match any element of the chain (the
 * clicked one or an ancestor), as PostHog's does.
 */
export function selectorRegex(selector: string): string {
  const cleaned = selector.replaceAll('> * > ', '').replaceAll('> *', '').trim()
  const tags = splitSelector(cleaned).reverse()
  let regex = ''
  let direct = true
  for (const text of tags) {
    if (text === '>') direct = true
    if (text === '>' || text === '') continue
    if (regex !== '' && !direct) regex += '(?:;[^;]*)*?'
    regex += elementRegex(selectorPart(text))
    direct = false
  }
  return regex
}

/** The condition that the chain matches `regex`. */
export function chainMatches(regex: string): string {
  return `match(${CHAIN}, ${str(regex)})`
}
