// Package onoff is the one idiom of the library's optional stages: a
// Switch whose zero value, Auto, means the stage's default choice (always
// on for some stages, decided from the data for others), and On and Off
// that force it. Packages re-export the type and its values.
package onoff

import "fmt"

// Switch turns an optional stage on or off; Auto leaves the choice to the
// stage's default.
type Switch int8

const (
	Auto Switch = iota
	On
	Off
)

func (s Switch) String() string {
	switch s {
	case Auto:
		return "auto"
	case On:
		return "on"
	case Off:
		return "off"
	}
	return fmt.Sprintf("Switch(%d)", int(s))
}

// Check returns an error naming the setting for a value that is not a
// Switch.
func (s Switch) Check(setting string) error {
	if s < Auto || s > Off {
		return fmt.Errorf("%s = %d is not Auto, On or Off", setting, int(s))
	}
	return nil
}
