// Package usage keeps what the model provider reported for every response:
// prompt, completion and cached prompt tokens, per chat, session, turn and
// model, in an append-only JSON-lines file that is compacted as it grows.
// It sums them over a turn, a session, a day and the last 30 days in a
// chat's zone, prices them with the operator's MODEL_PRICES and checks a
// chat against its USAGE_DAILY_LIMIT. It imports only atomicfile.
package usage
