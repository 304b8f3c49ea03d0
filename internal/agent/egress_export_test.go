package agent

// WithheldImage is the note that stands for an image holding a secret.
const WithheldImage = withheldImage
