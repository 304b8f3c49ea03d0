package main

import (
	"runtime/debug"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	const full = "0123456789abcdef0123456789abcdef01234567"
	settings := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		commit   string
		want     string
	}{
		{name: "a released module", version: "v1.2.3", want: "v1.2.3 go1.26.8"},
		{name: "a checkout", version: "(devel)", settings: settings("vcs.revision", full), want: "0123456789ab go1.26.8"},
		{name: "a modified checkout", version: "(devel)", settings: settings("vcs.revision", full, "vcs.modified", "true"), want: "0123456789ab+dirty go1.26.8"},
		{name: "a released module with its revision", version: "v1.2.3", settings: settings("vcs.revision", full), want: "v1.2.3 0123456789ab go1.26.8"},
		{name: "the image: no .git, SOURCE_COMMIT passed", version: "(devel)", commit: full, want: "0123456789ab go1.26.8"},
		{name: "the recorded revision wins over the argument", version: "(devel)", settings: settings("vcs.revision", full), commit: "fedcba9876543210", want: "0123456789ab go1.26.8"},
		{name: "nothing known", version: "(devel)", want: "(devel) go1.26.8"},
		{name: "an empty argument", version: "(devel)", commit: "", want: "(devel) go1.26.8"},
		{name: "an argument that is no commit", version: "(devel)", commit: "main; rm -rf /", want: "(devel) go1.26.8"},
		{name: "no version at all", want: "(devel) go1.26.8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: tt.version}, Settings: tt.settings}
			if got := describeBuild(info, tt.commit); got != tt.want {
				t.Errorf("describeBuild = %q, want %q", got, tt.want)
			}
		})
	}
}
