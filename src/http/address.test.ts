import { describe, expect, test } from 'bun:test'
import { addressGroup } from './address'

describe('address groups', () => {
  test('IPv4 as itself; IPv6 by its /64, however it is written', () => {
    expect(addressGroup('192.0.2.7')).toBe('192.0.2.7')
    expect(addressGroup('2001:db8:0:1::1')).toBe('2001:db8:0:1::/64')
    expect(addressGroup('2001:0DB8:0000:0001:ffff:ffff:ffff:fffe')).toBe('2001:db8:0:1::/64')
    expect(addressGroup('[2001:db8:0:1::9]')).toBe('2001:db8:0:1::/64')
    expect(addressGroup('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(addressGroup('::1')).toBe('0:0:0:0::/64')
    expect(addressGroup('2001:db8::')).toBe('2001:db8:0:0::/64')
    expect(addressGroup('::ffff:192.0.2.7')).toBe('192.0.2.7')
    expect(addressGroup('64:ff9b::192.0.2.7')).toBe('64:ff9b:0:0::/64')
  })

  test('what is not an address is left as given', () => {
    for (const junk of ['1::2::3', 'a:b', 'zz::1', '1:2:3:4:5:6:7:8:9', 'unknown', '']) expect(addressGroup(junk)).toBe(junk)
  })
})
