package spawnpolicy

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseEnviron(t *testing.T) {
	got := parseEnviron([]string{"A=1", "B=x=y", "EMPTY=", "=C:=C:\\work", "NOEQUALS", "A=2"})
	want := map[string]string{"A": "2", "B": "x=y", "EMPTY": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseEnviron (-want +got):\n%s", diff)
	}
}

func TestEnvHelpersByCase(t *testing.T) {
	tests := []struct {
		name string
		fold bool
		do   func(env map[string]string)
		want map[string]string
	}{
		{
			name: "set is ordinal on Unix",
			do:   func(env map[string]string) { setVar(env, "Path", "/x", false) },
			want: map[string]string{"PATH": "/bin", "Path": "/x", "tz": "UTC"},
		},
		{
			name: "set replaces any case on Windows",
			fold: true,
			do:   func(env map[string]string) { setVar(env, "Path", "/x", true) },
			want: map[string]string{"Path": "/x", "tz": "UTC"},
		},
		{
			name: "unset is ordinal on Unix",
			do:   func(env map[string]string) { unsetVar(env, "path", false) },
			want: map[string]string{"PATH": "/bin", "tz": "UTC"},
		},
		{
			name: "unset removes any case on Windows",
			fold: true,
			do:   func(env map[string]string) { unsetVar(env, "path", true) },
			want: map[string]string{"tz": "UTC"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"PATH": "/bin", "tz": "UTC"}
			tt.do(env)
			if diff := cmp.Diff(tt.want, env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMentions(t *testing.T) {
	explicit := map[string]*string{"tz": nil}
	if mentions(explicit, "TZ", false) {
		t.Error("mentions(tz, TZ) on Unix = true, want false")
	}
	if !mentions(explicit, "TZ", true) {
		t.Error("mentions(tz, TZ) on Windows = false, want true")
	}
	if !mentions(map[string]*string{"TZ": nil}, "TZ", false) {
		t.Error("mentions(TZ, TZ) = false, want true")
	}
}

func TestCheckNamesOnWindows(t *testing.T) {
	env := map[string]string{"PATH": "/bin", "Path": "/x"}
	if err := checkNames(maps.Keys(env), false); err != nil {
		t.Errorf("Unix: %v, want nil", err)
	}
	if err := checkNames(maps.Keys(env), true); err == nil {
		t.Error("Windows: nil, want an error for PATH and Path")
	}
	explicit := map[string]*string{"Tz": nil, "TZ": nil}
	if err := checkExplicit(explicit, true); err == nil {
		t.Error("Windows: nil, want an error for Tz and TZ")
	}
}
