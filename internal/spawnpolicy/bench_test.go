package spawnpolicy

import (
	"fmt"
	"log/slog"
	"testing"
)

// benchEnv is a 150-variable environment: the host's usual variables, the
// test secrets, and generated variables, some of them matching a glob.
func benchEnv() map[string]string {
	env := hostEnv()
	for i := 0; len(env) < 150; i++ {
		switch i % 5 {
		case 0:
			env[fmt.Sprintf("SERVICE_%d_TOKEN", i)] = "generated-token-value"
		case 1:
			env[fmt.Sprintf("App__Section%d__ClientSecret", i)] = "generated-secret-value"
		default:
			env[fmt.Sprintf("SETTING_%03d_VALUE", i)] = "/opt/setting/value"
		}
	}
	return env
}

// BenchmarkPrepare prepares a bash request over a 150-variable environment
// with the default options, Debug logging off (the production default).
func BenchmarkPrepare(b *testing.B) {
	opts := DefaultOptions()
	opts.SecretValues = []string{secretBotToken, secretOpenAI, secretGoogle}
	env := benchEnv()
	// The snapshot is shared, not cloned per call, so the figure is the
	// policy's own cost; Prepare never writes to it.
	p, err := New(opts, slog.New(slog.DiscardHandler), func() map[string]string { return env })
	if err != nil {
		b.Fatal(err)
	}
	req := bashRequest()
	req.TimeZoneID = "Europe/Berlin"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Prepare(req); err != nil {
			b.Fatal(err)
		}
	}
}
