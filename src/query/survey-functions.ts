// PostHog's survey helpers in HogQL, written as the query they stand for, so that they compile on every store as
// the functions they are made of do:
// - getSurveyResponse(questionIndex, questionId?, isMultipleChoice?): the answer to a question, read from
//   `$survey_response_<questionId>` and else from the legacy key of its index (`$survey_response` for the first,
//   `$survey_response_<index>` after); '' counts as no answer. A multiple choice answer is its JSON array as text.
// - uniqueSurveySubmissionsFilter(surveyId): one `survey sent` event per submission of the survey: an event with no
//   `$survey_completed` (a survey without partial responses), or the one that completed it. (PostHog keeps the last
//   event of each submission; here a submission abandoned half way is not counted.)
import type { Expr } from './ast'
import { QueryError } from './errors'
import { stringLiteral, wholeLiteral, type Call } from './function-args'

export const SURVEY_FUNCTIONS = ['getSurveyResponse', 'uniqueSurveySubmissionsFilter']

const str = (value: string): Expr => ({ k: 'string', value })
const call = (name: string, args: Expr[], at: number): Expr => ({ k: 'call', name, args, distinct: false, star: false, at })
const and = (left: Expr, right: Expr): Expr => ({ k: 'binary', op: 'AND', left, right })
const or = (left: Expr, right: Expr): Expr => ({ k: 'binary', op: 'OR', left, right })
const eq = (left: Expr, right: Expr): Expr => ({ k: 'binary', op: '=', left, right })

function bool(name: string, e: Expr | undefined): boolean {
  if (e === undefined) return false
  if (e.k === 'bool') return e.value
  if (e.k === 'number' && (e.value === 0 || e.value === 1)) return e.value === 1
  throw new QueryError(`${name}() takes isMultipleChoice as true or false`)
}

/** The expression a survey helper stands for, or null when `e` is not one. */
export function surveyCall(name: string, e: Call): Expr | null {
  const at = e.at
  const property = (key: string): Expr => ({ k: 'property', table: null, path: [key], at })
  if (name === 'getSurveyResponse') {
    if (e.args.length < 1 || e.args.length > 3) throw new QueryError('getSurveyResponse() takes the question index, then optionally its id and whether it is multiple choice')
    const index = wholeLiteral(name, e.args[0], 'the question index', 0, 10_000)
    const id = e.args[1] === undefined || e.args[1].k === 'null' ? null : stringLiteral(name, e.args[1], 'the question id')
    if (id !== null && id.length > 200) throw new QueryError('getSurveyResponse(): a question id is at most 200 characters')
    const multiple = bool(name, e.args[2])
    const keys = [...(id !== null ? [`$survey_response_${id}`] : []), index === 0 ? '$survey_response' : `$survey_response_${index}`]
    const value = (key: string): Expr =>
      multiple ? call('JSONExtractRaw', [{ k: 'property', table: null, path: [], at }, str(key)], at) : call('toString', [property(key)], at)
    // '' (and an empty array) is no answer: the next key is read
    const answer = (key: string): Expr => ({
      k: 'case',
      operand: null,
      whens: [{ when: and({ k: 'binary', op: '!=', left: value(key), right: str('') }, { k: 'binary', op: '!=', left: value(key), right: str('[]') }), then: value(key) }],
      otherwise: { k: 'null' },
    })
    return call('coalesce', keys.map(answer), at)
  }
  if (name === 'uniqueSurveySubmissionsFilter') {
    if (e.args.length !== 1) throw new QueryError("uniqueSurveySubmissionsFilter() takes the survey's id")
    const surveyId = stringLiteral(name, e.args[0], "the survey's id")
    const completed = or({ k: 'isNull', arg: property('$survey_completed'), not: false }, eq(call('JSONExtractBool', [{ k: 'property', table: null, path: [], at }, str('$survey_completed')], at), { k: 'number', value: 1, text: '1' }))
    return and(and(eq({ k: 'name', parts: ['event'], at }, str('survey sent')), eq(property('$survey_id'), str(surveyId))), completed)
  }
  return null
}
