// PostHog's survey helpers compile on every store, and refuse what they cannot take (their answers on real stores:
// test/integration/surveys.contract.ts).
import { describe, expect, test } from 'bun:test'
import { compileQuery } from './compile'
import type { DialectName } from './dialect'
import { QueryError } from './errors'
import { parseQuery } from './parser'

const DIALECTS: DialectName[] = ['sqlite', 'duckdb', 'clickhouse-legacy', 'clickhouse-modern']
const compile = (text: string, dialect: DialectName) => compileQuery(parseQuery(text), { dialect, teamId: 42, database: 'db', now: Date.UTC(2024, 0, 10) })

describe('survey helpers', () => {
  test('compile on every store', () => {
    for (const dialect of DIALECTS) {
      const single = compile("SELECT getSurveyResponse(0, 'q-1'), getSurveyResponse(2), getSurveyResponse(1, 'q-2', true) FROM events WHERE uniqueSurveySubmissionsFilter('0190-abc')", dialect)
      const text = JSON.stringify(single)
      for (const part of ['$survey_response_q-1', '$survey_response_2', '$survey_response_q-2', '$survey_response_1', '0190-abc', 'survey sent']) expect(text).toContain(part)
    }
  })

  test('a hostile id stays inside its literal', () => {
    for (const dialect of DIALECTS) {
      const compiled = compile("SELECT getSurveyResponse(0, 'x'' OR 1=1 --') FROM events WHERE uniqueSurveySubmissionsFilter('a'' OR ''1''=''1')", dialect)
      // bound as a parameter (SQLite, DuckDB) or quoted with its quote escaped (ClickHouse): never bare SQL
      if (dialect === 'clickhouse-legacy') expect(compiled.sql).toContain("'$survey_response_x\\' OR 1=1 --'")
      else expect(compiled.sql).not.toContain('OR 1=1')
    }
  })

  test('refusals say why', () => {
    const refused = (text: string) => {
      try {
        compile(text, 'sqlite')
      } catch (error) {
        expect(error).toBeInstanceOf(QueryError)
        return (error as Error).message
      }
      throw new Error(`not refused: ${text}`)
    }
    expect(refused('SELECT getSurveyResponse() FROM events')).toContain('question index')
    expect(refused('SELECT getSurveyResponse(-1) FROM events')).toContain('whole number')
    expect(refused('SELECT getSurveyResponse(0, event) FROM events')).toContain('string literal')
    expect(refused("SELECT getSurveyResponse(0, 'a', 'yes') FROM events")).toContain('true or false')
    expect(refused('SELECT count() FROM events WHERE uniqueSurveySubmissionsFilter(event)')).toContain('string literal')
  })
})
