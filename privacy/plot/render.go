package plot

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// Format is an image format the charts are drawn in.
type Format string

// The formats Render draws.
const (
	PNG Format = "png"
	SVG Format = "svg"
)

// ErrFormat is returned by Render for a format it does not draw.
var ErrFormat = errors.New("unknown image format")

// Render draws the charts, stacked, in format f (WritePNG, WriteSVG) and
// returns the image, so that a caller writing several files renders all
// of them before it writes any.
func Render(f Format, charts []privacy.Chart) ([]byte, error) {
	var b bytes.Buffer
	var err error
	switch f {
	case PNG:
		err = WritePNG(&b, charts)
	case SVG:
		err = WriteSVG(&b, charts)
	default:
		return nil, fmt.Errorf("%w %q (want png or svg)", ErrFormat, f)
	}
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
