import { describe, expect, test } from 'bun:test'
import { page, pageLinks, publicUrl, rowsThatFit } from './pagination'

const url = new URL('http://testserver/api/projects/@current/event_definitions/?search=x')

describe('page links', () => {
  test('next carries limit and offset; previous drops offset when it reaches the start', () => {
    expect(pageLinks(url, 250, 100, 0)).toEqual({
      next: 'http://testserver/api/projects/@current/event_definitions/?search=x&limit=100&offset=100',
      previous: null,
    })
    expect(pageLinks(url, 250, 100, 100)).toEqual({
      next: 'http://testserver/api/projects/@current/event_definitions/?search=x&limit=100&offset=200',
      previous: 'http://testserver/api/projects/@current/event_definitions/?search=x&limit=100',
    })
    expect(pageLinks(url, 250, 100, 200)).toEqual({
      next: null,
      previous: 'http://testserver/api/projects/@current/event_definitions/?search=x&limit=100&offset=100',
    })
  })

  test('an offset past the end still links back', () => {
    expect(pageLinks(url, 5, 10, 50).next).toBeNull()
    expect(pageLinks(url, 5, 10, 50).previous).toContain('offset=40')
  })

  test('forwarded host and scheme are used only behind a trusted proxy', () => {
    const req = new Request('http://10.0.0.5:8000/x', {
      headers: { 'x-forwarded-host': 'analytics.example.com', 'x-forwarded-proto': 'https' },
    })
    expect(publicUrl(req, true).origin).toBe('https://analytics.example.com')
    expect(publicUrl(req, false).origin).toBe('http://10.0.0.5:8000')
  })
})

describe('paging parameters', () => {
  const { parsePaging, MAX_PAGE_SIZE } = require('./pagination') as typeof import('./pagination')
  test('default to 100 from 0', () => expect(parsePaging({})).toEqual({ limit: 100, offset: 0 }))
  test('refuse zero, negatives and text with the parameter named', () => {
    expect(() => parsePaging({ limit: '0' })).toThrow('greater than or equal to 1')
    try {
      parsePaging({ offset: 'abc' })
    } catch (e) {
      expect((e as { attr: string; code: string }).attr).toBe('offset')
      expect((e as { code: string }).code).toBe('invalid_input')
    }
  })
  test('clamp huge values instead of refusing them: a page is at most MAX_PAGE_SIZE, an offset any safe integer', () => {
    expect(parsePaging({ limit: '99999999999999999999999' }).limit).toBe(MAX_PAGE_SIZE)
    expect(parsePaging({ limit: '1001' }).limit).toBe(1000)
    expect(parsePaging({ limit: '1000' }).limit).toBe(1000)
    expect(parsePaging({ offset: '99999999999999999999999' }).offset).toBe(Number.MAX_SAFE_INTEGER)
  })
})

describe('pages within a byte budget', () => {
  test('as many items as fit, at least one, at most the limit', () => {
    expect(rowsThatFit([4, 4, 4, 4], 10, 10)).toBe(2)
    expect(rowsThatFit([40, 4], 10, 10)).toBe(1) // one item larger than the budget still has its page
    expect(rowsThatFit([1, 1, 1], 2, 10)).toBe(2)
    expect(rowsThatFit([], 10, 10)).toBe(0)
  })

  test('a page cut short links to right after its items, keeping the limit', () => {
    const url = new URL('http://h/api/projects/1/persons/?limit=100&offset=200')
    const cut = page(url, 1000, 100, 200, ['a', 'b', 'c'], true)
    expect(cut.next).toBe('http://h/api/projects/1/persons/?limit=100&offset=203')
    expect(page(url, 1000, 100, 200, ['a', 'b', 'c']).next).toBe('http://h/api/projects/1/persons/?limit=100&offset=300')
    expect(page(url, 203, 100, 200, ['a', 'b', 'c'], true).next).toBeNull()
  })
})
