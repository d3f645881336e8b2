import { describe, expect, test } from 'bun:test'
import { InflightBodies } from './inflight'

describe('bytes in flight', () => {
  test('the whole budget and one address\'s quarter of it are held; what is released is free again', () => {
    const refused: string[] = []
    const budget = new InflightBodies(400, { onRefused: (scope) => refused.push(scope) })
    expect(budget.reserve('a', 100)).toBe(true)
    expect(budget.reserve('a', 1)).toBe(false) // a's share is 100
    expect(budget.reserve('b', 100)).toBe(true)
    expect(budget.reserve('c', 100)).toBe(true)
    expect(budget.reserve('d', 100)).toBe(true)
    expect(budget.reserve('e', 1)).toBe(false) // the whole 400
    expect(refused).toEqual(['address', 'process'])
    budget.release('a', 100)
    expect(budget.reserve('e', 100)).toBe(true)
    expect(budget.reservedBytes).toBe(400)
  })

  test('one body larger than a share still passes when its address holds nothing, and when nothing is in flight', () => {
    const budget = new InflightBodies(400)
    expect(budget.reserve('a', 399)).toBe(true)
    budget.release('a', 399)
    expect(budget.reserve('a', 1000)).toBe(true) // nothing else in flight: never refused forever
    expect(budget.reserve('b', 1)).toBe(false)
    budget.release('a', 1000)
    expect(budget.reservedBytes).toBe(0)
  })

  test('the chunks of one body larger than the budget pass while nothing else is in flight; another body is refused', () => {
    const budget = new InflightBodies(400)
    let held = 0
    for (let i = 0; i < 10; i++) {
      expect(budget.reserve('a', 100, held)).toBe(true)
      held += 100
    }
    expect(budget.reserve('b', 1)).toBe(false)
    expect(budget.reserve('a', 1)).toBe(false) // a second body of the same address
    budget.release('a', held)
    expect(budget.reservedBytes).toBe(0)
  })
})

describe('declared lengths not yet received', () => {
  test('hold at most half the budget; past it the caller reads the body chunk by chunk, within the rest', () => {
    const budget = new InflightBodies(400)
    expect(budget.reserveDeclared('a', 100)).toBe('reserved')
    expect(budget.reserveDeclared('b', 100)).toBe('reserved')
    expect(budget.reserveDeclared('c', 1)).toBe('full') // no refusal: the body takes the stream
    expect(budget.reserve('c', 100)).toBe(true) // what has arrived still fits
    budget.release('a', 100, true)
    expect(budget.reserveDeclared('e', 100)).toBe('reserved')
    expect(budget.reserveDeclared('a', 100)).toBe('full')
    budget.release('b', 100, true)
    budget.release('e', 100, true)
    budget.release('c', 100)
    expect(budget.reservedBytes).toBe(0)
    expect(budget.reserveDeclared('d', 200)).toBe('reserved')
  })
})

describe('an IPv6 client', () => {
  test('holds one share for its whole /64', () => {
    const budget = new InflightBodies(400)
    expect(budget.reserve('2001:db8:0:1::1', 100)).toBe(true)
    expect(budget.reserve('2001:db8:0:1::2', 1)).toBe(false)
    expect(budget.reserve('2001:db8:0:2::1', 100)).toBe(true)
    budget.release('2001:db8:0:1::1', 100)
    expect(budget.reserve('2001:db8:0:1:ffff::9', 100)).toBe(true)
  })
})
