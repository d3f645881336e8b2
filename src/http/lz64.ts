// lz-string's compressToBase64 format, decompressed with a cap on the output so a small body cannot
// expand into gigabytes (LZW output can grow quadratically with its input).

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='
const VALUE = new Int8Array(128).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i

export class Lz64Error extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message)
  }
}

const END = 2

/** Decompress lz-string base64 text; throws Lz64Error on corrupt input or when the output passes maxChars. */
export function decompressLz64(input: string, maxChars: number): string {
  const length = input.length
  if (length === 0) throw new Lz64Error('empty lz64 payload')

  // Six bits per character, consumed most significant first; past the end every bit reads as zero.
  const valueAt = (i: number): number => {
    if (i >= length) return 0
    const code = input.charCodeAt(i)
    const v = code < 128 ? VALUE[code] : -1
    if (v < 0) throw new Lz64Error(`invalid character in lz64 payload at offset ${i}`)
    return v
  }
  let index = 1
  let word = valueAt(0)
  let mask = 32
  const read = (bits: number): number => {
    let value = 0
    for (let i = 0, power = 1; i < bits; i++, power *= 2) {
      if (word & mask) value += power
      mask >>= 1
      if (mask === 0) {
        mask = 32
        word = valueAt(index++)
      }
    }
    return value
  }
  const literal = (kind: number): string => String.fromCharCode(read(kind === 0 ? 8 : 16))

  const first = read(2)
  if (first === END) return ''
  if (first > 1) throw new Lz64Error('corrupt lz64 payload')
  // Entries are built by concatenation (cheap ropes); their first characters are kept aside, because asking a
  // rope for its first character would flatten it, and a dictionary of ever longer prefixes would then cost
  // quadratic memory before the output cap is reached.
  const dictionary: string[] = ['', '', '']
  const firstChar: string[] = ['', '', '']
  let w = literal(first)
  let wFirst = w
  dictionary.push(w)
  firstChar.push(w)
  let enlargeIn = 4
  let numBits = 3
  let produced = w.length
  const out: string[] = [w]

  for (;;) {
    if (index > length) throw new Lz64Error('truncated lz64 payload')
    let code = read(numBits)
    if (code === END) return out.join('')
    if (code < 2) {
      const c = literal(code)
      dictionary.push(c)
      firstChar.push(c)
      code = dictionary.length - 1
      if (--enlargeIn === 0) {
        enlargeIn = 2 ** numBits
        numBits++
      }
    }
    let entry: string
    let entryFirst: string
    if (code > END && code < dictionary.length) {
      entry = dictionary[code]
      entryFirst = firstChar[code]
    } else if (code === dictionary.length) {
      entry = w + wFirst
      entryFirst = wFirst
    } else {
      throw new Lz64Error('corrupt lz64 payload')
    }
    produced += entry.length
    if (produced > maxChars) throw new Lz64Error('decompressed lz64 payload too large', true)
    out.push(entry)
    dictionary.push(w + entryFirst)
    firstChar.push(wFirst)
    w = entry
    wFirst = entryFirst
    if (--enlargeIn === 0) {
      enlargeIn = 2 ** numBits
      numBits++
    }
  }
}
