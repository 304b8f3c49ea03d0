// Package atomicfile keeps the project's two promises about durable state
// files: [WriteFile] replaces a file so that a crash leaves either the old
// content or the new, never a mix; [Log] appends JSON lines so that a crash
// leaves at worst a torn last line, which the next [OpenLog] drops.
//
// It imports nothing but the standard library.
package atomicfile
