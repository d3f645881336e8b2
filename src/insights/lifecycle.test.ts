import { describe, expect, test } from 'bun:test'
import { statusesOf } from './lifecycle'

describe('a person’s lifecycle statuses', () => {
  test('new in the period of their creation, returning while active, dormant after', () => {
    expect(statusesOf([1, 2, 3], 1)).toEqual([[1, 'new'], [2, 'returning'], [3, 'returning'], [4, 'dormant']])
  })

  test('a gap: dormant the period after, resurrecting when back', () => {
    expect(statusesOf([1, 3], 1)).toEqual([[1, 'new'], [2, 'dormant'], [3, 'resurrecting'], [4, 'dormant']])
  })

  test('first seen in the window but created before it (or not at all): resurrecting, never returning', () => {
    expect(statusesOf([2, 3], -1)).toEqual([[2, 'resurrecting'], [3, 'returning'], [4, 'dormant']])
    expect(statusesOf([0, 1], -1)).toEqual([[0, 'resurrecting'], [1, 'returning'], [2, 'dormant']])
  })

  test('created in a later period than the first activity (events sent with older times): not new', () => {
    expect(statusesOf([1, 2], 2)).toEqual([[1, 'resurrecting'], [2, 'returning'], [3, 'dormant']])
  })

  test('active only in the period before the range: dormant in the first', () => {
    expect(statusesOf([0], 0)).toEqual([[0, 'new'], [1, 'dormant']])
  })
})
