// Package storagefail is what the writers of the bot's state files share
// about a disk that refuses writes (full, over quota, read-only, failing):
// [Is] tells such an error from others, and an [Episode] logs a run of
// them as one episode, so that a busy bot on a full disk logs three lines
// per writer (its start at Error, its end at Info, the rest at Debug)
// instead of one per write.
//
// It imports nothing but the standard library.
package storagefail
