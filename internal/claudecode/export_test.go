package claudecode

// WithExtraEnv returns cfg with env added to claude's environment: the
// seam through which the real-CLI test reaches its fake Messages API (never
// an operator's setting).
func WithExtraEnv(cfg Config, env map[string]string) Config {
	cfg.extraEnv = env
	return cfg
}
