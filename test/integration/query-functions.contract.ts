// The HogQL functions of docs/query.md "Functions", run over the same events on every store (the embedded DuckDB
// and SQLite stores, ClickHouse 18.16, a current ClickHouse on chDB): each answer compared with the rows it must
// give, worked out by hand below, so that every store gives the same ones. Also the hostile shapes: a regular
// expression that backtracks in other engines, quantile lists past their bound, -If nested deep, arrays that would
// multiply rows.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { DialectName } from '../../src/query/dialect'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const DAY = Date.UTC(2024, 4, 6) // a Monday
const at = (days: number, hh: number, mm = 0, ss = 0) => DAY + days * 86_400_000 + ((hh * 60 + mm) * 60 + ss) * 1000

export interface FunctionsEvent {
  event: string
  distinctId: string
  timestamp: number
  properties: Record<string, unknown>
}

/** A text that a backtracking engine takes exponential time over with (a+)+$ and the like; RE2 reads it once. */
const LONG_A = 'a'.repeat(50_000)
/** 20,001 pieces for splitByChar */
const MANY_PIECES = Array(20_001).fill('x').join(',')

export const FUNCTIONS_EVENTS: FunctionsEvent[] = [
  {
    event: '$pageview', distinctId: 'u1', timestamp: at(0, 1, 2, 3),
    properties: { $browser: 'Chrome', $current_url: 'https://shop.test/items/42?ref=mail', n: 1, price: 2.5, flag: true, tags: 'red,green,blue', obj: { k: 'v', deep: { z: 3 } }, title: 'say "hi"\\ok\tnow' },
  },
  { event: '$pageview', distinctId: 'u1', timestamp: at(0, 1, 17, 40), properties: { $browser: 'Chrome', $current_url: 'https://shop.test/cart', n: 2, price: 3.5, flag: false, tags: 'green' } },
  { event: '$pageview', distinctId: 'u2', timestamp: at(0, 2, 45), properties: { $browser: 'Safari', $current_url: 'https://shop.test/items/7', n: 10, price: 0.125, tags: '' } },
  { event: 'signup', distinctId: 'u2', timestamp: at(1, 10), properties: { plan: 'pro', n: -2.5, price: 2.675, s: '7' } },
  { event: '$pageview', distinctId: 'u3', timestamp: at(2, 23, 59, 59), properties: { $browser: 'Firefox', $current_url: 'https://blog.test/post', n: 7, price: 1.25, tags: 'blue,,red', note: 'line\nbreak é' } },
  { event: 'purchase', distinctId: 'u3', timestamp: at(3, 0), properties: { amount: 100, n: 7, price: -2.5, huge: 1e30, neg: -1.7 } },
  { event: '$pageview', distinctId: 'u4', timestamp: Date.UTC(2024, 6, 1, 12, 34, 56), properties: { $browser: 'Chrome', n: 4, price: 0.5, tags: 'red' } },
  // read only by the hostile cases (event 'long')
  { event: 'long', distinctId: 'u5', timestamp: Date.UTC(2024, 0, 1), properties: { long: LONG_A, many: MANY_PIECES } },
]

/** A query and the rows it must give; `sqlite`: what the SQLite store answers instead (a refusal naming why). */
interface Case {
  name: string
  query: string
  rows: unknown[][]
  sqlite?: RegExp
}

const NOT_LONG = "event != 'long'"
/** 20 levels (the most quantiles takes) from 0 to 1 */
const LEVELS = Array.from({ length: 20 }, (_, i) => Number((i / 19).toFixed(4)))
const N_SORTED = [-2.5, 1, 2, 4, 7, 7, 10]

export const FUNCTIONS_CASES: Case[] = [
  {
    name: '-If combinators, over no rows too',
    query: `SELECT countIf(event = '$pageview'), countIf(properties.n, properties.n > 2), sumIf(properties.n, event = '$pageview'),
      avgIf(properties.price, event = '$pageview'), uniqIf(distinct_id, event = '$pageview'), minIf(properties.n, event = '$pageview'),
      maxIf(timestamp, event = '$pageview'), countIf(event = 'nothing'), sumIf(properties.n, event = 'nothing'),
      avgIf(properties.n, event = 'nothing'), minIf(properties.n, 0), uniqExactIf(event, properties.n > 2), anyIf(properties.n, properties.n > 5)
      FROM events WHERE ${NOT_LONG}`,
    // prices 2.5 + 3.5 + 0.125 + 1.25 + 0.5 = 7.875 over 5, exact in binary: every store sums it the same
    rows: [[5, 4, 24, 1.575, 4, 1, '2024-07-01T12:34:56.000Z', 0, 0, null, null, 2, 7]],
  },
  {
    name: '-If with its condition nested, per group',
    query: `SELECT distinct_id, countIf(event = '$pageview' AND (properties.n > 1 OR (properties.flag = true AND NOT (properties.$browser = 'Safari')))) AS c,
      sumIf(properties.price, if(properties.n > 5, 1, 0)) AS s
      FROM events WHERE ${NOT_LONG} GROUP BY distinct_id ORDER BY distinct_id`,
    rows: [['u1', 2, 0], ['u2', 1, 0.125], ['u3', 1, -1.25], ['u4', 1, 0]],
  },
  {
    name: 'uniq and uniqExact count exactly',
    query: `SELECT uniq(distinct_id), uniqExact(event), uniqExact(properties.$browser), count(DISTINCT properties.tags) FROM events WHERE ${NOT_LONG}`,
    rows: [[4, 3, 3, 5]],
  },
  {
    name: 'argMin and argMax, NULLs left out',
    query: `SELECT argMax(event, timestamp), argMin(event, timestamp), argMax(distinct_id, properties.n), argMin(properties.$current_url, timestamp),
      argMax(properties.$browser, toDate(timestamp)), argMax(dateDiff('day', timestamp, toDateTime('2024-01-01 00:00:00')), timestamp),
      argMax(properties.flag = true, timestamp), argMax(properties.missing, timestamp), argMin(timestamp, properties.price)
      FROM events WHERE ${NOT_LONG}`,
    rows: [['$pageview', '$pageview', 'u2', 'https://shop.test/items/42?ref=mail', 'Chrome', -182, false, null, '2024-05-09T00:00:00.000Z']],
  },
  {
    name: 'argMin and argMax: ties settled by the value taken (least for argMin, greatest for argMax)',
    query: `SELECT argMax(distinct_id, toDate(timestamp)), argMin(distinct_id, toDate(timestamp)), argMaxIf(distinct_id, toDate(timestamp), timestamp < '2024-05-07'),
      argMaxIf(event, properties.n, distinct_id = 'u3'), argMinIf(event, properties.n, distinct_id = 'u3'), argMaxIf(event, timestamp, event = 'nothing')
      FROM events WHERE timestamp > '2024-05-02' AND (timestamp < '2024-05-07' OR distinct_id = 'u3')`,
    // u1, u1 and u2 on 2024-05-06; u3's two events both have n = 7
    rows: [['u3', 'u1', 'u2', 'purchase', '$pageview', null]],
  },
  {
    name: 'argMax per person: the last URL',
    query: `SELECT distinct_id, argMax(properties.$current_url, timestamp) AS last_url, argMin(event, properties.price) FROM events WHERE ${NOT_LONG} GROUP BY distinct_id ORDER BY distinct_id`,
    rows: [
      ['u1', 'https://shop.test/cart', '$pageview'],
      ['u2', 'https://shop.test/items/7', '$pageview'],
      ['u3', 'https://blog.test/post', 'purchase'],
      ['u4', null, '$pageview'],
    ],
  },
  {
    name: 'groupArray: sorted, NULLs left out, bounded, text escaped',
    query: `SELECT groupArray(distinct_id), groupArray(properties.n), groupArray(toFloat(properties.amount)), groupArray(2)(event), groupArray(properties.title),
      groupArray(toFloat(properties.n)), groupArrayIf(distinct_id, event = 'nothing')
      FROM events WHERE ${NOT_LONG}`,
    rows: [[
      ['u1', 'u1', 'u2', 'u2', 'u3', 'u3', 'u4'],
      ['-2.5', '1', '10', '2', '4', '7', '7'],
      [100],
      ['$pageview', '$pageview'],
      ['say "hi"\\ok\tnow'],
      [-2.5, 1, 2, 4, 7, 7, 10],
      [],
    ]],
  },
  {
    name: 'groupArray per group, from a subquery',
    query: `SELECT d, events FROM (SELECT distinct_id AS d, groupArray(event) AS events FROM events WHERE ${NOT_LONG} GROUP BY d) ORDER BY d`,
    rows: [['u1', ['$pageview', '$pageview']], ['u2', ['$pageview', 'signup']], ['u3', ['$pageview', 'purchase']], ['u4', ['$pageview']]],
  },
  {
    name: 'arrayJoin of splitByChar, grouped',
    query: `SELECT arrayJoin(splitByChar(',', properties.tags)) AS tag, count() AS n FROM events WHERE event = '$pageview' GROUP BY tag ORDER BY n DESC, tag`,
    rows: [['red', 3], ['', 2], ['blue', 2], ['green', 2]],
  },
  {
    name: 'arrayJoin in WHERE',
    query: `SELECT count() FROM events WHERE arrayJoin(splitByChar(',', properties.tags)) = 'red'`,
    rows: [[3]],
  },
  {
    name: 'arrayJoin inside aggregates: the elements counted; length() of an aggregate array',
    query: `SELECT count(arrayJoin(splitByChar(',', properties.tags))), countIf(arrayJoin(splitByChar(',', properties.tags)) = 'red'), length(groupArray(2)(event)) FROM events`,
    rows: [[9, 3, 2]],
  },
  {
    name: 'arrayJoin beside person_id',
    // whoever the persons are on a store, each UUID has 5 parts, as does the stand-in for none
    query: `SELECT arrayJoin(splitByChar(',', properties.tags)) AS tag, count() FROM events WHERE (person_id IS NULL OR person_id IS NOT NULL) AND event = '$pageview' GROUP BY tag ORDER BY tag`,
    rows: [['', 2], ['blue', 2], ['green', 2], ['red', 3]],
  },
  {
    name: 'arrayJoin of an array made of person_id',
    query: `SELECT count() FROM events WHERE arrayJoin(splitByChar('-', coalesce(person_id, 'a-b-c-d-e'))) != ''`,
    rows: [[40]],
  },
  {
    name: 'arrayJoin of a subquery’s groupArray',
    query: `SELECT arrayJoin(ids) AS id, count() FROM (SELECT groupArray(distinct_id) AS ids FROM events WHERE event IN ('signup', 'purchase')) GROUP BY id ORDER BY id`,
    rows: [['u2', 1], ['u3', 1]],
  },
  {
    name: 'splitByChar: empty pieces kept, NULL gives no pieces; length() of an array',
    query: `SELECT distinct_id, splitByChar('/', properties.$current_url), length(splitByChar(',', properties.tags)), splitByChar(',', ',a,') FROM events WHERE ${NOT_LONG} ORDER BY timestamp`,
    rows: [
      ['u1', ['https:', '', 'shop.test', 'items', '42?ref=mail'], 3, ['', 'a', '']],
      ['u1', ['https:', '', 'shop.test', 'cart'], 1, ['', 'a', '']],
      ['u2', ['https:', '', 'shop.test', 'items', '7'], 1, ['', 'a', '']],
      ['u2', [], 0, ['', 'a', '']],
      ['u3', ['https:', '', 'blog.test', 'post'], 3, ['', 'a', '']],
      ['u3', [], 0, ['', 'a', '']],
      ['u4', [], 1, ['', 'a', '']],
    ],
  },
  {
    name: 'quantile(p)(x) is quantileExact: the value at floor(p × n) of the sorted values',
    query: `SELECT quantile(0.5)(properties.n), quantile(0)(properties.n), quantile(1)(properties.n), quantile(0.9)(properties.n), median(properties.price),
      quantiles(0.1, 0.5, 0.99)(properties.n), quantile(0.5)(dateDiff('hour', toDateTime('2024-05-06 00:00:00'), timestamp)), quantileIf(0.5)(properties.n, event = '$pageview'),
      quantileExact(0.25)(properties.n), quantilesExact(0.5)(properties.price), quantile(properties.n)
      FROM events WHERE ${NOT_LONG}`,
    // n sorted: -2.5 1 2 4 7 7 10; prices sorted: -2.5 0.125 0.5 1.25 2.5 2.675 3.5; hours: 1 1 2 34 71 72 1356
    rows: [[4, -2.5, 10, 10, 1.25, [-2.5, 4, 10], 34, 4, 1, [1.25], 4]],
  },
  {
    name: 'quantiles over no values: NULL and []',
    query: `SELECT event, quantile(0.5)(properties.amount), quantiles(0.5, 0.9)(properties.amount) FROM events WHERE ${NOT_LONG} GROUP BY event ORDER BY event`,
    rows: [['$pageview', null, []], ['purchase', 100, [100, 100]], ['signup', null, []]],
  },
  {
    name: 'toStartOf…, dateAdd, dateSub, add…/subtract…',
    query: `SELECT toStartOfMinute(timestamp), toStartOfFiveMinutes(timestamp), toStartOfTenMinutes(timestamp), toStartOfFifteenMinutes(timestamp),
      toStartOfQuarter(timestamp), toStartOfYear(timestamp), toMonday(timestamp), dateAdd('day', 1, timestamp), dateSub('month', 1, timestamp),
      dateAdd(hour, -2, timestamp), addMonths(timestamp, 1), subtractDays(timestamp, 8), addYears(toDate(timestamp), 1),
      dateAdd('quarter', 1, toDate(timestamp)), dateDiff('minute', timestamp, addHours(timestamp, 2)), date_diff('second', timestamp, addMinutes(timestamp, 1))
      FROM events WHERE distinct_id = 'u1' ORDER BY timestamp`,
    rows: [
      ['2024-05-06T01:02:00.000Z', '2024-05-06T01:00:00.000Z', '2024-05-06T01:00:00.000Z', '2024-05-06T01:00:00.000Z', '2024-04-01', '2024-01-01', '2024-05-06',
        '2024-05-07T01:02:03.000Z', '2024-04-06T01:02:03.000Z', '2024-05-05T23:02:03.000Z', '2024-06-06T01:02:03.000Z', '2024-04-28T01:02:03.000Z', '2025-05-06', '2024-08-06', 120, 60],
      ['2024-05-06T01:17:00.000Z', '2024-05-06T01:15:00.000Z', '2024-05-06T01:10:00.000Z', '2024-05-06T01:15:00.000Z', '2024-04-01', '2024-01-01', '2024-05-06',
        '2024-05-07T01:17:40.000Z', '2024-04-06T01:17:40.000Z', '2024-05-05T23:17:40.000Z', '2024-06-06T01:17:40.000Z', '2024-04-28T01:17:40.000Z', '2025-05-06', '2024-08-06', 120, 60],
    ],
  },
  {
    name: 'toStartOfQuarter, toMonday, toStartOfYear on other days; grouped by toStartOfFifteenMinutes',
    query: `SELECT toStartOfQuarter(timestamp) AS q, toMonday(timestamp), toStartOfYear(timestamp), toStartOfFifteenMinutes(timestamp) FROM events WHERE event != '$pageview' ORDER BY timestamp`,
    rows: [
      ['2024-01-01', '2024-01-01', '2024-01-01', '2024-01-01T00:00:00.000Z'],
      ['2024-04-01', '2024-05-06', '2024-01-01', '2024-05-07T10:00:00.000Z'],
      ['2024-04-01', '2024-05-06', '2024-01-01', '2024-05-09T00:00:00.000Z'],
    ],
  },
  {
    name: 'multiIf, coalesce, ifNull',
    query: `SELECT multiIf(properties.n > 5, 'high', properties.n > 1, 'mid', 'low') AS bucket, coalesce(properties.$browser, properties.plan, 'none'),
      ifNull(properties.amount, '-'), multiIf(event = 'signup', 1, event = 'purchase', 2.5, 0)
      FROM events WHERE ${NOT_LONG} ORDER BY timestamp`,
    rows: [
      ['low', 'Chrome', '-', 0], ['mid', 'Chrome', '-', 0], ['high', 'Safari', '-', 0], ['low', 'pro', '-', 1],
      ['high', 'Firefox', '-', 0], ['high', 'none', '100', 2.5], ['mid', 'Chrome', '-', 0],
    ],
  },
  {
    name: 'JSONExtract…(properties, keys): values, and ClickHouse’s answer when absent or of another kind',
    query: `SELECT JSONExtractString(properties, '$browser'), JSONExtractString(properties, 'obj', 'k'), JSONExtractString(properties, 'n'), JSONExtractString(properties, 'missing'),
      JSONExtractInt(properties, 'n'), JSONExtractInt(properties, 'obj', 'deep', 'z'), JSONExtractInt(properties, '$browser'), JSONExtractFloat(properties, 'price'),
      JSONExtractFloat(properties, 'missing'), JSONExtractBool(properties, 'flag'), JSONExtractBool(properties, 'n'), JSONExtractRaw(properties, 'obj'),
      JSONExtractRaw(properties, 'missing'), JSONExtractRaw(properties, '$browser'), JSONExtractRaw(properties, 'n'), JSONExtractRaw(properties, 'obj', 'deep')
      FROM events ORDER BY timestamp LIMIT 1 OFFSET 1`,
    rows: [['Chrome', 'v', '1', '', 1, 3, 0, 2.5, 0, 1, 0, '{"k":"v","deep":{"z":3}}', '', '"Chrome"', '1', '{"z":3}']],
  },
  {
    name: 'JSONExtractInt: integer part, 0 past Int64 and for strings; JSONExtractFloat, JSONExtractBool of false',
    query: `SELECT event, JSONExtractInt(properties, 'huge'), JSONExtractInt(properties, 'neg'), JSONExtractInt(properties, 'amount'), JSONExtractFloat(properties, 'neg'),
      JSONExtractInt(properties, 's'), JSONExtractString(properties, 's'), JSONExtractBool(properties, 'flag'), JSONExtractInt(properties, 'n'), JSONExtractRaw(properties, 'note')
      FROM events WHERE event IN ('purchase', 'signup') OR (distinct_id = 'u1' AND properties.flag = false) OR distinct_id = 'u3' ORDER BY timestamp`,
    rows: [
      ['$pageview', 0, 0, 0, 0, 0, '', 0, 2, ''],
      ['signup', 0, 0, 0, 0, 0, '7', 0, -2, ''],
      ['$pageview', 0, 0, 0, 0, 0, '', 0, 7, '"line\\nbreak é"'],
      ['purchase', 0, -1, 100, -1.7, 0, '', 0, 7, ''],
    ],
  },
  {
    name: 'splitByChar, replaceAll, lower, position',
    query: `SELECT replaceAll(properties.$current_url, 'shop.test', 'store.example'), lower(properties.$browser), position(properties.$current_url, 'items'),
      position('héllo wörld', 'w'), positionUTF8(properties.$current_url, ''), replace(event, '$', '')
      FROM events WHERE distinct_id = 'u1' ORDER BY timestamp`,
    rows: [
      ['https://store.example/items/42?ref=mail', 'chrome', 19, 7, 1, 'pageview'],
      ['https://store.example/cart', 'chrome', 0, 7, 1, 'pageview'],
    ],
  },
  {
    name: 'literals stay literals in the new functions (quotes, backslashes, comment markers)',
    query: `SELECT replaceAll(event, '$', '\\' OR 1=1 --'), JSONExtractString(properties, 'it''s'), splitByChar(';', 'a\\\\;b--;c'), position('x\\'y', '\\'')
      FROM events WHERE distinct_id = 'u1' ORDER BY timestamp LIMIT 1`,
    rows: [["' OR 1=1 --pageview", '', ["a\\", 'b--', 'c'], 2]],
  },
  {
    name: 'extract: the first group, else the whole match, else \'\' (RE2; refused on SQLite)',
    query: `SELECT extract(properties.$current_url, 'items/([0-9]+)'), extract(properties.$current_url, '[a-z]+\\\\.test'), extract(properties.$current_url, 'nomatch(x)'),
      extract(properties.note, 'line.break (.)'), extract(properties.$current_url, '(?P<host>[a-z]+)\\\\.test')
      FROM events WHERE distinct_id IN ('u1', 'u3') AND event = '$pageview' ORDER BY timestamp`,
    rows: [['42', 'shop.test', '', null, 'shop'], ['', 'shop.test', '', null, 'shop'], ['', 'blog.test', '', 'é', 'blog']],
    sqlite: /extract\(\) is not available on the embedded SQLite store/,
  },
  {
    name: 'match: a match anywhere (RE2), `.` across lines, NULL for a missing property (refused on SQLite)',
    query: `SELECT countIf(match(properties.$current_url, 'items/[0-9]+')), countIf(match(properties.$current_url, '^https://shop\\\\.test/(cart|items)')),
      countIf(match(properties.note, 'line.break')), countIf(match(properties.nope, '.*')), countIf(NOT match(properties.$current_url, '(?i)SHOP'))
      FROM events WHERE ${NOT_LONG}`,
    rows: [[2, 3, 1, 0, 1]],
    sqlite: /match\(\) is not available on the embedded SQLite store/,
  },
  {
    name: 'round halves to even, floor and ceil, to decimals or tens',
    query: `SELECT round(2.5), round(3.5), round(-2.5), round(0.125, 2), round(2.675, 2), round(1.005, 2), round(1234.5, -1), round(25, -1), round(-25, -1),
      round(15, -1), floor(2.7), floor(-2.5), floor(2.675, 2), ceil(2.1), ceiling(-2.1, 0), round(7), floor(-7), round(properties.price, 1), round(properties.n)
      FROM events WHERE distinct_id = 'u2' ORDER BY timestamp`,
    rows: [
      [2, 4, -2, 0.12, 2.68, 1, 1230, 30, -30, 20, 2, -3, 2.67, 3, -2, 7, -7, 0.1, 10],
      [2, 4, -2, 0.12, 2.68, 1, 1230, 30, -30, 20, 2, -3, 2.67, 3, -2, 7, -7, 2.7, -2],
    ],
  },
  {
    name: 'hostile: a regular expression that backtracks elsewhere, over 50,000 characters (RE2: linear)',
    query: `SELECT length(extract(properties.long, '(a+)+$')), extract(properties.long, '(a|aa)*b'), length(extract(properties.long, '(?:.*a){20}$')) FROM events WHERE event = 'long'`,
    rows: [[50_000, '', 50_000]],
    sqlite: /extract\(\) is not available on the embedded SQLite store/,
  },
  {
    name: 'hostile: 20,001 pieces of one property unrolled',
    query: `SELECT count(), uniqExact(piece) FROM (SELECT arrayJoin(splitByChar(',', properties.many)) AS piece FROM events WHERE event = 'long')`,
    rows: [[20_001, 1]],
  },
  {
    name: 'hostile: -If over a condition nested 30 deep, and 20 quantile levels (the most)',
    query: `SELECT countIf(${'('.repeat(30)}properties.n > 1${')'.repeat(30)}), sumIf(properties.n, ${'if('.repeat(20)}event = '$pageview'${", 1, 0) = 1".repeat(20)}),
      quantiles(${LEVELS.join(', ')})(properties.n)
      FROM events WHERE ${NOT_LONG}`,
    // the definition, computed here: n sorted is -2.5 1 2 4 7 7 10, the level p takes position floor(p × 7)
    rows: [[5, 24, LEVELS.map((p) => N_SORTED[p >= 1 ? 6 : Math.floor(p * 7)])]],
  },
]

/** Queries every store refuses alike, and what the refusal says (each names the function). */
export const FUNCTIONS_REFUSALS: [string, RegExp][] = [
  ['SELECT countIf() FROM events', /countIf\(\) takes its condition as its last argument/],
  ["SELECT countIf(event) FROM events", /countIf\(\) takes a condition there, not a String/],
  ["SELECT sumIf(sumIf(properties.n, 1), event = 'a') FROM events", /inside another aggregate/],
  ["SELECT sumIfIf(properties.n, 1, 1) FROM events", /sumIfIf\(\): -If is applied once/],
  ['SELECT sumArray(properties.n) FROM events', /sumArray\(\): the -Array combinator is not supported/],
  ['SELECT argMax(event) FROM events', /argMax\(\) takes 2 arguments, not 1/],
  ["SELECT sumIf(event, event = 'a') FROM events", /sumIf\(\) takes numbers, not a String/],
  ['SELECT avg(timestamp) FROM events', /avg\(\) takes numbers, not a DateTime/],
  ['SELECT uniqExact(event, distinct_id) FROM events', /uniqExact\(\) takes 1 argument, not 2/],
  ['SELECT quantile(1.5)(properties.n) FROM events', /quantile\(\) takes levels as numbers from 0 to 1/],
  ['SELECT quantile(0.5, 0.9)(properties.n) FROM events', /quantile\(\) takes one level/],
  ['SELECT quantiles(properties.n) FROM events', /quantiles\(\) takes its levels as parameters/],
  ['SELECT quantile(0.5)(event) FROM events', /quantile\(\) takes numbers, not a String/],
  [`SELECT quantiles(${Array(21).fill('0.5').join(', ')})(properties.n) FROM events`, /quantiles\(\) takes at most 20 levels, not 21/],
  [`SELECT quantiles(${Array(101).fill('0.5').join(', ')})(properties.n) FROM events`, /at most 100 arguments \(quantiles\(\)\)/],
  ['SELECT quantileTDigest(0.5)(properties.n) FROM events', /quantileTDigest\(\) is not supported: it is approximate/],
  ['SELECT uniqCombined(event) FROM events', /uniqCombined\(\) is not supported: it is approximate/],
  ['SELECT count(1)(event) FROM events', /count\(\) takes no parameters/],
  ['SELECT groupArray(10001)(event) FROM events', /groupArray\(\) takes its largest size \(the parameter\) as a whole number from 1 to 10000/],
  ['SELECT arrayJoin(event) FROM events', /arrayJoin\(\) takes an array/],
  ["SELECT arrayJoin(splitByChar(',', event)), arrayJoin(splitByChar('/', event)) FROM events", /Only one array may be unrolled by arrayJoin\(\)/],
  ['SELECT arrayJoin(groupArray(event)) FROM events', /arrayJoin\(\) of an aggregate/],
  ["SELECT count() FROM events WHERE splitByChar(',', event) = 'a'", /splitByChar\(\) is an array/],
  ["SELECT splitByChar(',', event) AS parts, count() FROM events GROUP BY parts", /GROUP BY an array is not supported/],
  ["SELECT groupArray(event) FROM events ORDER BY 1", /ORDER BY an array is not supported/],
  ["SELECT lower(groupArray(event)) FROM events", /groupArray\(\) is an array/],
  ["SELECT splitByChar(',,', event) FROM events", /splitByChar\(\) takes one ASCII punctuation character or a space/],
  ["SELECT splitByChar('a', event) FROM events", /splitByChar\(\) takes one ASCII punctuation character or a space/],
  ["SELECT splitByChar(event, event) FROM events", /splitByChar\(\) takes its separator \(first\) as a string literal/],
  ["SELECT replaceAll(event, event, 'x') FROM events", /replaceAll\(\) takes what it replaces \(second\) as a string literal/],
  ["SELECT replaceAll(event, '', 'x') FROM events", /replaceAll\(\) needs a non-empty string to replace/],
  ["SELECT position(event) FROM events", /position\(\) takes 2 arguments, not 1/],
  ["SELECT multiIf(event = 'a', 1) FROM events", /multiIf\(\) takes pairs of a condition and a value/],
  ["SELECT multiIf(event = 'a', 1, 'x') FROM events", /multiIf\(\) gives values of different types \(Int and String\)/],
  ["SELECT JSONExtractString(event, 'a') FROM events", /JSONExtractString\(\) reads the properties column/],
  ["SELECT JSONExtractInt(properties) FROM events", /JSONExtractInt\(\) takes the properties column and at least one key/],
  ["SELECT JSONExtractRaw(properties, 'a', 1) FROM events", /JSONExtractRaw\(\) takes keys as strings: array positions are not supported/],
  ["SELECT JSONExtract(properties, 'a', 'String') FROM events", /JSONExtract\(\) is not supported/],
  ["SELECT dateAdd('fortnight', 1, timestamp) FROM events", /dateAdd\(\) does not know the unit 'fortnight'/],
  ["SELECT dateAdd('day', properties.n, timestamp) FROM events", /dateAdd\(\) takes its count \(the second argument\) as a whole number/],
  ["SELECT addDays(event, 1) FROM events", /addDays\(\) expects a date or time/],
  ['SELECT round(event) FROM events', /round\(\) takes a number, not a String/],
  ['SELECT round(properties.n, 1.5) FROM events', /round\(\) takes its decimals as a whole number from -15 to 15/],
  ['SELECT toStartOfInterval(timestamp, INTERVAL 1 DAY) FROM events', /toStartOfInterval\(\) is not supported/],
  ["SELECT countMatches(event, 'a') FROM events", /countMatches\(\) is not supported: of regular expressions only extract\(\) and match\(\)/],
  ["SELECT match(event, '(?<=a)b') FROM events", /match\(\): the regular expression looks around/],
  ["SELECT extract(event, event) FROM events", /extract\(\) takes its regular expression \(second\) as a string literal/],
  ["SELECT extract(event, '(a)\\\\1') FROM events", /refers back to a group/],
  ["SELECT extract(event, '(?=a)b') FROM events", /looks around/],
  ["SELECT extract(event, 'a{1001}') FROM events", /repeats something more than 1000 times/],
  ["SELECT extract(event, 'a++') FROM events", /possessive quantifier/],
  [`SELECT extract(event, '${'a'.repeat(1001)}') FROM events`, /longer than 1000 characters/],
  [`SELECT countIf(${'if('.repeat(70)}event = 'a'${', 1, 0) = 1'.repeat(70)}) FROM events`, /deeper than 64/],
  ['SELECT range(1000000000) FROM events', /range\(\) is not supported: of arrays only/],
]

/** Where a contract's queries go: the answer's status and body, as the query API gives them. */
export interface FunctionsTarget {
  dialect: DialectName
  /** status and body of POST /api/projects/:id/query/ for this HogQL text */
  query(text: string): Promise<{ status: number; body: any }>
  close(): Promise<void>
}

/** Every case's rows, and every refusal, on one store (its events put there by `open`). */
export function queryFunctionsContract(name: string, open: () => Promise<FunctionsTarget>): void {
  describe(`HogQL functions: ${name}`, () => {
    let target: FunctionsTarget
    beforeAll(async () => {
      target = await open()
    }, 180_000)
    afterAll(() => target?.close())

    for (const c of FUNCTIONS_CASES) {
      test(c.name, async () => {
        const started = performance.now()
        const { status, body } = await target.query(c.query)
        const ms = performance.now() - started
        if (c.sqlite && target.dialect === 'sqlite') {
          expect(status).toBe(400)
          expect(body).toMatchObject({ type: 'validation_error', code: 'invalid_query', attr: 'query' })
          expect(body.detail).toMatch(c.sqlite)
          return
        }
        if (status !== 200) throw new Error(`${status}: ${JSON.stringify(body)}`)
        expect(body.results).toEqual(c.rows)
        // bounded: the hostile shapes answer within seconds on a loaded two-core machine
        expect(ms).toBeLessThan(20_000)
      })
    }

    test('refusals: 400 invalid_query naming the function, before the store is asked', async () => {
      for (const [text, message] of FUNCTIONS_REFUSALS) {
        const { status, body } = await target.query(text)
        if (status !== 400 || !message.test(body.detail)) throw new Error(`${text.slice(0, 120)}: ${status} ${JSON.stringify(body).slice(0, 300)}`)
        expect(body).toMatchObject({ type: 'validation_error', code: 'invalid_query', attr: 'query' })
      }
    })
  })
}

/** A stack with the contract's events captured and stored. */
export async function captured(dialect: DialectName, start: () => Promise<Stack>): Promise<FunctionsTarget> {
  const stack = await start()
  const query = async (text: string) => {
    const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'HogQLQuery', query: text } } })
    return { status: r.status, body: await json(r) }
  }
  const batch = FUNCTIONS_EVENTS.map((e) => ({ event: e.event, timestamp: new Date(e.timestamp).toISOString(), properties: { distinct_id: e.distinctId, ...e.properties } }))
  const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
  expect(r.status).toBe(200)
  await learned(stack)
  for (let i = 0; i < 200; i++) {
    const { body } = await query('SELECT count() FROM events')
    if (body.results?.[0]?.[0] === FUNCTIONS_EVENTS.length) break
    await Bun.sleep(50)
  }
  return { dialect, query, close: () => stack.close() }
}
