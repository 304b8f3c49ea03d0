package main

import (
	"maps"
	"slices"
	"strings"
)

// doctorUsage prints the fallback models, the priced models and the daily
// limit.
func doctorUsage(r *report, cfg Config) {
	if len(cfg.FallbackModels) > 0 {
		r.line("  fallback models (OPENAI_FALLBACK_MODELS): %s", strings.Join(cfg.FallbackModels, ", "))
	}
	if len(cfg.Prices) > 0 {
		r.line("  priced models (MODEL_PRICES): %s", strings.Join(slices.Sorted(maps.Keys(cfg.Prices)), ", "))
	}
	r.line("  daily limit per chat (USAGE_DAILY_LIMIT): %s", cfg.DailyLimit)
}
