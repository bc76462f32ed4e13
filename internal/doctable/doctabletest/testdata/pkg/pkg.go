package pkg

const maxFileBytes = 1 << 20

const LineMax = 80

// limitTimeout is no bound by its name; listed when its file counts whole.
const limitTimeout = 3

type bound struct {
	Name     string
	Value    any
	Unit     string
	Protects string
}

var bounds = []bound{
	{"maxFileBytes", maxFileBytes, "bytes", "a file"},
	{"LineMax", LineMax, "bytes", "a line"},
}
