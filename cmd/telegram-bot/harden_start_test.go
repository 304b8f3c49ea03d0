package main

import (
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStartHardening(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		subcommand string
		want       startPlan
	}{
		{name: "default hardens, bot logs at info", subcommand: "run", want: startPlan{enabled: true, level: slog.LevelInfo}},
		{name: "explicit false", env: map[string]string{"PROCESS_ENV_HARDEN_HOST_PROCESS": "false"}, subcommand: "run", want: startPlan{level: slog.LevelInfo}},
		{name: "OFF in capitals", env: map[string]string{"PROCESS_ENV_HARDEN_HOST_PROCESS": " OFF "}, subcommand: "doctor", want: startPlan{level: slog.LevelWarn}},
		{name: "version stays quiet", subcommand: "version", want: startPlan{enabled: true, level: slog.LevelError}},
		{name: "help stays quiet", subcommand: "--help", env: map[string]string{"LOG_LEVEL": "debug"}, want: startPlan{enabled: true, level: slog.LevelError}},
		{name: "a typo fails closed", env: map[string]string{"PROCESS_ENV_HARDEN_HOST_PROCESS": "flase"}, subcommand: "run", want: startPlan{enabled: true, level: slog.LevelInfo}},
		{name: "healthcheck hardens and stays quiet", env: map[string]string{"LOG_LEVEL": "debug"}, subcommand: "healthcheck", want: startPlan{enabled: true, level: slog.LevelError}},
		{name: "bot at debug in json", env: map[string]string{"LOG_LEVEL": "debug", "LOG_FORMAT": "JSON"}, subcommand: "run", want: startPlan{enabled: true, level: slog.LevelDebug, json: true}},
		{name: "bad level falls back to info", env: map[string]string{"LOG_LEVEL": "loud"}, subcommand: "run", want: startPlan{enabled: true, level: slog.LevelInfo}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := startHardening(func(k string) string { return tt.env[k] }, tt.subcommand)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(startPlan{})); diff != "" {
				t.Errorf("startHardening (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSubcommandOf(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "run"},
		{[]string{"doctor"}, "doctor"},
		{[]string{"healthcheck", "--help"}, "healthcheck"},
		{[]string{"--help"}, "run"},
		{[]string{""}, "run"},
	} {
		if got := subcommandOf(tt.args); got != tt.want {
			t.Errorf("subcommandOf(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestStartName(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "run"},
		{[]string{"doctor"}, "doctor"},
		{[]string{"run", "--help"}, "--help"},
		{[]string{"--version"}, "--version"},
		{[]string{"healthcheck"}, "healthcheck"},
	} {
		if got := startName(tt.args); got != tt.want {
			t.Errorf("startName(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
