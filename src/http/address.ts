// The unit a per-address budget counts. An IPv4 address is one client; an IPv6 client is usually given a whole /64
// (2^64 addresses it may spread its requests over), so IPv6 addresses are counted by their /64.

const HEXTET = /^[0-9a-f]{1,4}$/

/** `address`, or for an IPv6 address its /64 (`2001:db8:0:1::/64`); anything unparsable is returned as given. */
export function addressGroup(address: string): string {
  if (!address.includes(':')) return address
  let text = address.toLowerCase()
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1)
  // an IPv4 address written as IPv6 (::ffff:192.0.2.1) is that IPv4 client
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (mapped) return mapped[1]!
  const halves = text.split('::')
  if (halves.length > 2) return address
  const head = halves[0] === '' ? [] : halves[0]!.split(':')
  const tail = halves.length === 2 && halves[1] !== '' ? halves[1]!.split(':') : []
  // (a trailing embedded IPv4 takes two hextets, past the /64 part anyway)
  const size = (parts: string[]) => parts.reduce((n, p) => n + (p.includes('.') ? 2 : 1), 0)
  const missing = 8 - size(head) - size(tail)
  if (halves.length === 1 ? missing !== 0 : missing < 1) return address
  const full = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...tail]
  const prefix = full.slice(0, 4)
  if (!prefix.every((p) => HEXTET.test(p))) return address
  return `${prefix.map((p) => parseInt(p, 16).toString(16)).join(':')}::/64`
}
