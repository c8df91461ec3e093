// The naive tool-call harness of the lab (examples/tools/README.md): what a
// loop between a model and an MCP server often is. It sends whatever tool call
// the model wrote, with the SDK's own per-request `timeout` set to the budget,
// and passes the result on: an `isError` result's text, or a thrown error's
// message, goes back verbatim as the error; anything else is taken as good.
// It checks nothing itself, so it never knows at which stage a call failed
// (stage is always null) and carries no facts beyond its error's text.
//
// naive(client, { budgetMs }) -> { call(toolCall) } where toolCall is
// { name, arguments } and call resolves to the outcome lab.mjs prints:
// { accepted, text, error, stage, facts, rollback, sent } (sent: always true).
import { messageOf, resultText } from './harness.mjs';

export function naive(client, { budgetMs }) {
  return {
    async call({ name, arguments: args }) {
      try {
        const result = await client.callTool({ name, arguments: args }, undefined, { timeout: budgetMs });
        const text = resultText(result);
        if (result.isError) return { accepted: false, text: null, error: text, stage: null, facts: null, rollback: 'none', sent: true };
        return { accepted: true, text, error: null, stage: null, facts: null, rollback: 'none', sent: true };
      } catch (error) {
        return { accepted: false, text: null, error: messageOf(error), stage: null, facts: null, rollback: 'none', sent: true };
      }
    },
  };
}
