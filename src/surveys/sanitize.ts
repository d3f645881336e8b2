// The HTML a survey may show (question, description, thank-you message): an allow-list sanitiser, as PostHog runs
// nh3 on them. Known formatting tags are rebuilt from scratch with only the attributes allowed (a link's href when it
// is https, http or mailto); every other tag is dropped (the text inside kept), except those whose content is code
// or hidden (script, style, iframe, …), dropped whole; comments go; a stray `<` or `&` is escaped. Nothing of the
// input reaches the output as markup unless this file wrote it.

const ALLOWED = new Set([
  'a', 'abbr', 'b', 'blockquote', 'br', 'code', 'del', 'div', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'ins',
  'li', 'mark', 'ol', 'p', 'pre', 's', 'small', 'span', 'strong', 'sub', 'sup', 'u', 'ul',
])
const VOID = new Set(['br', 'hr'])
/** tags whose content is not text a reader should see: dropped with it */
const DROP_WITH_CONTENT = new Set([
  'script', 'style', 'iframe', 'object', 'embed', 'noscript', 'template', 'textarea', 'title', 'svg', 'math', 'select',
  'xmp', 'noembed', 'noframes', 'plaintext', 'frameset', 'frame', 'applet', 'head',
])
const MAX_DEPTH = 64
const TAG = /<(\/?)([a-zA-Z][a-zA-Z0-9]{0,15})((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/y
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g
const ENTITY = /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});/y
const SAFE_HREF = /^(?:https?:\/\/|mailto:)[^\s"'<>`\\\u0000-\u001f]*$/i

const escapeText = (c: string) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&amp;')

function linkAttributes(attributes: string): string {
  for (const m of attributes.matchAll(ATTRIBUTE)) {
    if (m[1]!.toLowerCase() !== 'href') continue
    const value = (m[2] ?? m[3] ?? m[4] ?? '').trim()
    // only a literal safe scheme: an entity-encoded or spaced-out "javascript:" never starts like one
    if (SAFE_HREF.test(value)) return ` href="${value.replace(/&(?![a-zA-Z0-9#]{1,32};)/g, '&amp;')}" rel="noopener noreferrer"`
    return ''
  }
  return ''
}

/** `html` with only the allowed markup left, well nested. */
export function sanitizeHtml(html: string): string {
  let out = ''
  const open: string[] = []
  let i = 0
  while (i < html.length) {
    const c = html[i]!
    if (c === '&') {
      ENTITY.lastIndex = i
      const m = ENTITY.exec(html)
      if (m) {
        out += m[0]
        i += m[0].length
      } else {
        out += '&amp;'
        i++
      }
      continue
    }
    if (c === '>' || c === '"') {
      out += escapeText(c)
      i++
      continue
    }
    if (c !== '<') {
      // plain text up to the next special character
      let j = i + 1
      while (j < html.length && !'<>&"'.includes(html[j]!)) j++
      out += html.slice(i, j)
      i = j
      continue
    }
    if (html.startsWith('<!--', i)) {
      const end = html.indexOf('-->', i + 4)
      i = end === -1 ? html.length : end + 3
      continue
    }
    if (html[i + 1] === '!' || html[i + 1] === '?') {
      const end = html.indexOf('>', i + 2)
      i = end === -1 ? html.length : end + 1
      continue
    }
    TAG.lastIndex = i
    const m = TAG.exec(html)
    if (!m) {
      out += '&lt;'
      i++
      continue
    }
    i += m[0].length
    const closing = m[1] === '/'
    const name = m[2]!.toLowerCase()
    if (!closing && DROP_WITH_CONTENT.has(name)) {
      const close = new RegExp(`</${name}\\s*>`, 'ig')
      close.lastIndex = i
      const end = close.exec(html)
      i = end ? end.index + end[0].length : html.length
      continue
    }
    if (!ALLOWED.has(name)) continue
    if (closing) {
      const at = open.lastIndexOf(name)
      if (at === -1) continue
      while (open.length > at) out += `</${open.pop()}>`
      continue
    }
    if (VOID.has(name)) {
      out += `<${name}>`
      continue
    }
    if (open.length >= MAX_DEPTH) continue
    out += name === 'a' ? `<a${linkAttributes(m[3] ?? '')}>` : `<${name}>`
    open.push(name)
  }
  while (open.length > 0) out += `</${open.pop()}>`
  return out
}
