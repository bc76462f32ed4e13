package pkg

const maxFileBytes = 1 << 20

const LineMax = 80

// limitTimeout is no bound by its name; listed when its file counts whole.
const limitTimeout = 3
