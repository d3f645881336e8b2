import { describe, expect, test } from 'bun:test'
import { detectPropertyType, RECENT_TIMESTAMP_SECONDS } from './property-types'

const NOW_MS = Date.UTC(2025, 5, 15, 12, 0, 0)
const NOW_S = Math.floor(NOW_MS / 1000)
const OLD_S = 1639400730 // December 2021: older than six months
const type = (key: string, value: unknown) => detectPropertyType(key, value, NOW_MS)

describe('property types as ingestion detects them', () => {
  test('utm_*, $feature/*, $feature_flag_response and $survey_response* are String whatever the value', () => {
    for (const value of ['x', 42, true, null, { a: 1 }, [1], '2023-12-13', NOW_S]) {
      expect(type('utm_source', value)).toBe('String')
      expect(type('UTM_Campaign', value)).toBe('String')
      expect(type('$feature/new-checkout', value)).toBe('String')
      expect(type('$feature_flag_response', value)).toBe('String')
      expect(type('$survey_response_2', value)).toBe('String')
    }
  })

  test('date-like strings are DateTime under any key', () => {
    for (const value of [
      '2025-03-11T09:48:12.863948+00:00',
      '2023-12-13T15:45:30Z',
      '2023/12/13 15:45:30',
      '12-13-2023 15:45:30-07:00',
      '12/13/2023T15:45:30',
      '2023-13-12T15:45:30', // month 13 passes, as in PostHog
      '2023-12-13',
      '12/13/2023',
      'Tue, 1 Jul 2003 10:52:37 +0200', // RFC 2822
      '1 Jul 2003 10:52 GMT',
    ]) {
      expect(type('signup_date', value)).toBe('DateTime')
      expect(type('anything', value)).toBe('DateTime')
    }
  })

  test('strings that are not dates stay String, even under a date-like key', () => {
    expect(type('timestamp', '15:45:30')).toBe('String')
    expect(type('signup_date', 'not a date')).toBe('String')
    expect(type('created_at', 'not a date')).toBe('String')
    expect(type('plan', 'pro')).toBe('String')
    expect(type('count', '42')).toBe('String') // numeric-looking text stays String
    expect(type('x', '2023-12-13 and more')).toBe('String')
  })

  test('"true"/"false"/"TRUE"/"FALSE" (trimmed) are Boolean; "True" is String', () => {
    expect(type('signup_date', 'true')).toBe('Boolean')
    expect(type('posthog_is_awesome', 'FALSE')).toBe('Boolean')
    expect(type('flag', ' false ')).toBe('Boolean')
    expect(type('flag', 'TRUE')).toBe('Boolean')
    expect(type('flag', 'True')).toBe('String')
  })

  test('an old unix timestamp under a date-like key is Numeric', () => {
    for (const key of ['timestamp', 'TIME', 'created_at', 'createdAt', 'sent-at', 'was_detected_at']) {
      expect(type(key, OLD_S)).toBe('Numeric')
      expect(type(key, OLD_S * 1000)).toBe('Numeric') // milliseconds, just as old
    }
  })

  test('the current unix time is Numeric under a key that is not date-like', () => {
    expect(type('hedgehogs_enumerated', NOW_S)).toBe('Numeric')
    expect(type('thyme_stamp', NOW_S)).toBe('Numeric')
  })

  test('the current unix time (seconds or milliseconds) is DateTime under a date-like key', () => {
    for (const key of ['time', 'TIMESTAMP', 'created_time', 'sent_at', 'updatedAt', 'last-seen-at', 'sent_date', 'random_property_has_datetime_value']) {
      expect(type(key, NOW_S)).toBe('DateTime')
      expect(type(key, NOW_MS)).toBe('DateTime')
    }
  })

  test('the six-month boundary: exactly six months old is recent, one second more is not', () => {
    const boundary = NOW_S - RECENT_TIMESTAMP_SECONDS
    expect(type('time', boundary)).toBe('DateTime')
    expect(type('time', boundary - 1)).toBe('Numeric')
    expect(type('time', boundary * 1000)).toBe('DateTime')
    expect(type('time', boundary * 1000 - 1000)).toBe('Numeric')
    expect(type('time', NOW_S + 86_400)).toBe('DateTime') // the future counts as recent
  })

  test('negative or fractional numbers under a date-like key are Numeric', () => {
    expect(type('time', -NOW_S)).toBe('Numeric')
    expect(type('time', NOW_S + 0.5)).toBe('Numeric')
  })

  test('JSON numbers are Numeric, JSON booleans Boolean', () => {
    expect(type('price', 9.99)).toBe('Numeric')
    expect(type('delta', -3)).toBe('Numeric')
    expect(type('count', 0)).toBe('Numeric')
    expect(type('is_admin', true)).toBe('Boolean')
    expect(type('is_admin', false)).toBe('Boolean')
  })

  test('null, objects and arrays give no type', () => {
    expect(type('anything', null)).toBeNull()
    expect(type('anything', { nested: 1 })).toBeNull()
    expect(type('anything', [1, 2])).toBeNull()
    expect(type('created_at', null)).toBeNull()
  })
})
