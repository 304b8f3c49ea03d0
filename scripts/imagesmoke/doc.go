// Package imagesmoke is the smoke test of the container image: it runs the
// image built from the repository's Dockerfile with podman against the
// project's fake Telegram and model servers, and checks from inside, through
// the agent's own bash tool, what the deployment relies on. It holds only
// the test; scripts/image-smoke builds the image and runs it, and without
// the -image flag the test skips.
package imagesmoke
