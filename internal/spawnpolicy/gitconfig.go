package spawnpolicy

import (
	"strconv"
)

// The variables through which git takes configuration from the
// environment: GIT_CONFIG_COUNT pairs, GIT_CONFIG_KEY_<n> and
// GIT_CONFIG_VALUE_<n> for n from 0.
const (
	gitConfigCount = "GIT_CONFIG_COUNT"
	gitConfigKey   = "GIT_CONFIG_KEY_"
	gitConfigValue = "GIT_CONFIG_VALUE_"
)

// gitConfigAfterFilter keeps the git configuration in env usable once the
// filter removed a part of it: git refuses to run at all ("missing config
// value GIT_CONFIG_VALUE_0") when GIT_CONFIG_COUNT names a pair of which a
// variable is missing, and a value carrying a secret (an
// http.extraHeader with a token) is exactly what the filter removes. The
// pairs left whole are numbered again from 0 and counted; without one,
// GIT_CONFIG_COUNT goes too. A configuration the filter did not touch,
// well-formed or not, is left as it was inherited.
func gitConfigAfterFilter(env, inherited map[string]string) {
	count, err := strconv.Atoi(env[gitConfigCount])
	if err != nil || count <= 0 {
		return
	}
	touched := false
	for i := range count {
		n := strconv.Itoa(i)
		for _, name := range []string{gitConfigKey + n, gitConfigValue + n} {
			_, had := inherited[name]
			_, has := env[name]
			touched = touched || had && !has
		}
	}
	if !touched {
		return
	}
	kept := 0
	for i := range count {
		n := strconv.Itoa(i)
		key, hasKey := env[gitConfigKey+n]
		value, hasValue := env[gitConfigValue+n]
		delete(env, gitConfigKey+n)
		delete(env, gitConfigValue+n)
		if hasKey && hasValue {
			m := strconv.Itoa(kept)
			env[gitConfigKey+m], env[gitConfigValue+m] = key, value
			kept++
		}
	}
	if kept == 0 {
		delete(env, gitConfigCount)
		return
	}
	env[gitConfigCount] = strconv.Itoa(kept)
}
