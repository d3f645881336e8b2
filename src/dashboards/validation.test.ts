import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { DASHBOARD_LIMITS, queryMember, querySource, refreshMode, tagsField, validateDashboardBody, validateInsightBody } from './validation'

const refusal = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, code: error.code, attr: error.attr }
    throw error
  }
  throw new Error('accepted')
}

describe('saved query nodes', () => {
  test('wrappers and bare query nodes pass; the source is what runs', () => {
    const viz = { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [] } }
    expect(queryMember(viz)).toBe(viz)
    expect(querySource(viz)).toBe(viz.source)
    const bare = { kind: 'HogQLQuery', query: 'SELECT 1' }
    expect(querySource(queryMember(bare)!)).toBe(bare)
    expect(queryMember(null)).toBeNull()
  })

  test('other kinds, a wrapper without a source, and non-objects are refused naming query', () => {
    for (const q of [{ kind: 'SavedInsightNode' }, { kind: 'DataTableNode', source: { kind: 'x' } }, { kind: 'InsightVizNode' }, [], 'SELECT 1', 3]) {
      expect(refusal(() => queryMember(q))).toMatchObject({ status: 400, attr: 'query' })
    }
  })

  test('depth is checked before size, and stops at the first path past the bound', () => {
    // the node itself is level 1: `levels` more objects inside it
    const nested = (levels: number) => {
      let inner: unknown = 1
      for (let n = 0; n < levels; n++) inner = { a: inner }
      return { kind: 'HogQLQuery', query: 'SELECT 1', values: inner }
    }
    expect(refusal(() => queryMember(nested(DASHBOARD_LIMITS.queryDepth)))).toEqual({ status: 400, code: 'max_depth', attr: 'query' })
    const ok = nested(DASHBOARD_LIMITS.queryDepth - 1)
    expect(queryMember(ok)).toBe(ok)
    const big = { kind: 'HogQLQuery', query: 'x'.repeat(DASHBOARD_LIMITS.queryBytes) }
    expect(refusal(() => queryMember(big))).toEqual({ status: 400, code: 'max_length', attr: 'query' })
  })
})

describe('insight and dashboard bodies', () => {
  test('fields are read as DRF reads them; unknown fields ignored; tags normalised', () => {
    expect(validateInsightBody({ name: ' Views ', saved: true, tags: ['A', 'a ', ''], whatever: 1 })).toEqual({ name: 'Views', saved: true, tags: ['a'] })
    expect(validateInsightBody({ name: null, dashboards: [3, 3, 4] })).toEqual({ name: null, dashboards: [3, 4] })
    expect(validateDashboardBody({ name: 'D', tiles: [{ id: 1, deleted: true }] }, 'PATCH')).toEqual({ name: 'D', tiles: [{ id: 1, deleted: true }] })
    expect(validateDashboardBody({ name: 'D', tiles: [{ id: 1 }] }, 'POST')).toEqual({ name: 'D' })
  })

  test('every bound refused with its field', () => {
    expect(refusal(() => validateInsightBody({ name: 'x'.repeat(DASHBOARD_LIMITS.nameLength + 1) }))).toMatchObject({ attr: 'name', code: 'max_length' })
    expect(refusal(() => validateInsightBody({ description: 'x'.repeat(DASHBOARD_LIMITS.descriptionLength + 1) }))).toMatchObject({ attr: 'description' })
    expect(refusal(() => tagsField(Array.from({ length: DASHBOARD_LIMITS.tags + 1 }, (_, n) => `t${n}`)))).toMatchObject({ attr: 'tags' })
    expect(refusal(() => tagsField(['x'.repeat(DASHBOARD_LIMITS.tagLength + 1)]))).toMatchObject({ attr: 'tags' })
    expect(refusal(() => validateInsightBody({ dashboards: [0] }))).toMatchObject({ attr: 'dashboards' })
    expect(refusal(() => validateInsightBody({ dashboards: ['1'] }))).toMatchObject({ attr: 'dashboards' })
    expect(refusal(() => validateInsightBody([]))).toMatchObject({ attr: null })
    expect(refusal(() => validateDashboardBody({ tiles: Array.from({ length: DASHBOARD_LIMITS.tilesPerDashboard + 1 }, (_, n) => ({ id: n + 1 })) }, 'PATCH'))).toMatchObject({ attr: 'tiles' })
    expect(refusal(() => validateDashboardBody({ tiles: [{ id: 1, color: 'x'.repeat(DASHBOARD_LIMITS.colorLength + 1) }] }, 'PATCH'))).toMatchObject({ attr: 'tiles__0__color' })
    expect(refusal(() => validateDashboardBody({ tiles: [{ id: 1, layouts: { a: { b: { c: { d: { e: 1 } } } } } }] }, 'PATCH'))).toMatchObject({ attr: 'tiles__0__layouts' })
  })

  test('refresh modes: PostHog\'s names, anything else refused', () => {
    expect([undefined, '', 'false', 'force_cache'].map(refreshMode)).toEqual(['cache', 'cache', 'cache', 'cache'])
    expect(['true', 'force_blocking'].map(refreshMode)).toEqual(['force', 'force'])
    expect(['blocking', 'async'].map(refreshMode)).toEqual(['blocking', 'blocking'])
    expect(refusal(() => refreshMode('soon'))).toMatchObject({ attr: 'refresh', code: 'invalid_choice' })
  })
})
