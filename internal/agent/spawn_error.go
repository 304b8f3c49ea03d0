package agent

import "errors"

// ErrSpawnRefused is matched, with [errors.Is], by every error of
// [ToolContext.PrepareProcess] (and so of [ToolContext.Exec]) that refuses
// a spawn: the spawn policy or one of its host hooks failed (a hook's panic
// included), or an extension's process_spawn handler failed or left the
// context unusable. The error's text is the refusal's own message and
// carries no wording of the spawner's: each spawner reports it the way it
// reports a failed start, the bash tool as
// "process environment hook failed: <message>". The message may quote a
// hook's error or panic, so whatever shows it passes it through the
// redactor first.
var ErrSpawnRefused = errors.New("agent: spawn refused")

// spawnRefusedError is a refused spawn: its text is the cause's, and it
// matches both ErrSpawnRefused and the cause.
type spawnRefusedError struct {
	cause error
}

// Error returns the cause's message.
func (e *spawnRefusedError) Error() string { return e.cause.Error() }

// Unwrap returns ErrSpawnRefused and the cause.
func (e *spawnRefusedError) Unwrap() []error { return []error{ErrSpawnRefused, e.cause} }

// refuseSpawn marks cause as a refused spawn.
func refuseSpawn(cause error) error { return &spawnRefusedError{cause: cause} }
