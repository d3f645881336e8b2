import { describe, expect, test } from 'bun:test'
import { CSV_MAX_FIELD, parseCsvLine, readCsvIds } from './csv'

const bytes = (s: string) => new TextEncoder().encode(s)

describe('CSV lines', () => {
  test("Python's dialect: quotes only at a field's start, \"\" inside quotes, text after the closing quote kept", () => {
    expect(parseCsvLine('a,b,c')).toEqual(['a', 'b', 'c'])
    expect(parseCsvLine('"a,b",c')).toEqual(['a,b', 'c'])
    expect(parseCsvLine('"say ""hi""",x')).toEqual(['say "hi"', 'x'])
    expect(parseCsvLine('ab"cd,e')).toEqual(['ab"cd', 'e'])
    expect(parseCsvLine('"ab"cd,e')).toEqual(['abcd', 'e'])
    expect(parseCsvLine('')).toEqual([''])
    expect(parseCsvLine('a,')).toEqual(['a', ''])
    expect(() => parseCsvLine('"open')).toThrow('CSV file format is invalid')
  })

  test('a field longer than CSV_MAX_FIELD is refused, quoted or not, closed or not', () => {
    const long = 'x'.repeat(CSV_MAX_FIELD + 1)
    for (const line of [long, `"${long}"`, `"${long}`, `a,${long},b`, `"${'y'.repeat(CSV_MAX_FIELD)}"z`]) {
      expect(() => parseCsvLine(line)).toThrow(`at most ${CSV_MAX_FIELD} characters`)
    }
    expect(parseCsvLine(`"${'x'.repeat(CSV_MAX_FIELD)}"`)[0]).toHaveLength(CSV_MAX_FIELD)
  })

  test('ids of a file: header kinds, duplicates once', async () => {
    expect(await readCsvIds(bytes('person_id\n0190a1b2-0000-7000-8000-000000000001\n'))).toEqual({ kind: 'person_id', ids: ['0190a1b2-0000-7000-8000-000000000001'] })
    expect(await readCsvIds(bytes('a\nb\na\n'))).toEqual({ kind: 'distinct_id', ids: ['a', 'b'] })
    expect(await readCsvIds(bytes('name,email\nx,e@x.org\n'))).toEqual({ kind: 'email', ids: ['e@x.org'] })
  })
})
