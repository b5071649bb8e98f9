package main

/*
#include <stdint.h>
#include "gbs.h"
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"

	seedpkg "github.com/gbs-evidence/gbs/internal/seed"

	"github.com/gbs-evidence/gbs/flow"
	"github.com/gbs-evidence/gbs/internal/memlimit"
)

const flowKind = "gbs_flow"

// flowOptionsOldSize is the size of gbs_flow_options before the scale
// field was added at its end, which callers built against it still pass.
var flowOptionsOldSize = unsafe.Offsetof(C.gbs_flow_options{}.scale)

// offCode reads an option whose codes are auto and off: whether it says
// off, or an error naming the field and its codes.
func offCode(v, auto, off C.int32_t, field, codes string) (bool, error) {
	switch v {
	case auto:
		return false, nil
	case off:
		return true, nil
	}
	return false, argError("%s = %d is not a %s value", field, int32(v), codes)
}

// flowSettings converts the flow options for points of dimension d.
func flowSettings(o *C.gbs_flow_options, d int) (flow.Settings, error) {
	const name = "gbs_flow_options"
	for _, v := range []struct {
		val  C.double
		name string
	}{{o.damping, "damping"}, {o.bandwidth, "bandwidth"}, {o.validation_fraction, "validation_fraction"}} {
		if err := checkFinite(v.val, name+"."+v.name); err != nil {
			return flow.Settings{}, err
		}
	}
	var whiten flow.WhitenMode
	switch o.whiten {
	case C.GBS_WHITEN_CHOLESKY:
		whiten = flow.WhitenCholesky
	case C.GBS_WHITEN_PCA:
		whiten = flow.WhitenPCA
	case C.GBS_WHITEN_NONE:
		whiten = flow.WhitenNone
	default:
		return flow.Settings{}, argError("%s.whiten = %d is not a GBS_WHITEN_* value", name, int32(o.whiten))
	}
	var rot flow.RotationMode
	switch o.rotation {
	case C.GBS_ROTATION_MAX_SLICED:
		rot = flow.MaxSliced
	case C.GBS_ROTATION_RANDOM:
		rot = flow.RandomRotation
	default:
		return flow.Settings{}, argError("%s.rotation = %d is not a GBS_ROTATION_* value", name, int32(o.rotation))
	}
	condOff, err := offCode(o.conditional, C.GBS_CONDITIONAL_AUTO, C.GBS_CONDITIONAL_OFF, name+".conditional", "GBS_CONDITIONAL_*")
	if err != nil {
		return flow.Settings{}, err
	}
	scaleOff, err := offCode(o.scale, C.GBS_SCALE_AUTO, C.GBS_SCALE_OFF, name+".scale", "GBS_SCALE_*")
	if err != nil {
		return flow.Settings{}, err
	}
	lo, hi, err := copyBounds(o.lower, o.upper, d, name)
	if err != nil {
		return flow.Settings{}, err
	}
	return flow.Settings{
		MaxLayers:          int(o.max_layers),
		Layers:             int(o.layers),
		Directions:         int(o.directions),
		Knots:              int(o.knots),
		Whiten:             whiten,
		Rotation:           rot,
		Conditional:        offSwitch(condOff),
		Scale:              offSwitch(scaleOff),
		Threads:            int(o.threads),
		Damping:            float64(o.damping),
		Bandwidth:          float64(o.bandwidth),
		ValidationFraction: float64(o.validation_fraction),
		Seed:               uint64(o.seed),
		Lower:              lo,
		Upper:              hi,
	}, nil
}

// badData reports a fit that the data made impossible (NaN, a constant
// column, too few distinct points) as GBS_ERR_ARGUMENT.
func badData(err error) error {
	return newError(C.GBS_ERR_ARGUMENT, "%v", err)
}

// flowFitArgs checks every argument of gbs_flow_fit, before any work: the
// function it calls, and the one its fuzz test calls. It sets *out to
// NULL and reads no point.
func flowFitArgs(x *C.double, n, d C.int64_t, weights *C.double, opt *C.gbs_flow_options, out **C.gbs_flow) ([]float64, []float64, flow.Settings, error) {
	if out == nil {
		return nil, nil, flow.Settings{}, argError("out is NULL")
	}
	*out = nil
	size, err := count([]string{"n", "d"}, n, d)
	if err != nil {
		return nil, nil, flow.Settings{}, err
	}
	pts, err := doubles(x, size, "x")
	if err != nil {
		return nil, nil, flow.Settings{}, err
	}
	w, err := optionalDoubles(weights, int(n), "weights")
	if err != nil {
		return nil, nil, flow.Settings{}, err
	}
	o, err := readOptionsFrom(opt, "gbs_flow_options", flowOptionsOldSize)
	if err != nil {
		return nil, nil, flow.Settings{}, err
	}
	set, err := flowSettings(&o, int(d))
	return pts, w, set, err
}

//export gbsgo_flow_fit
func gbsgo_flow_fit(x *C.double, n, d C.int64_t, weights *C.double, opt *C.gbs_flow_options, out **C.gbs_flow, errOut **C.char) C.int {
	return call("gbs_flow_fit", errOut, func() error {
		pts, w, set, err := flowFitArgs(x, n, d, weights, opt, out)
		if err != nil {
			return err
		}
		f, err := flow.Fit(pts, int(d), w, &set)
		if err != nil {
			return badData(err)
		}
		*out = flowHandle(handles.add(f))
		return nil
	})
}

//export gbsgo_flow_free
func gbsgo_flow_free(f *C.gbs_flow, errOut **C.char) C.int {
	return call("gbs_flow_free", errOut, func() error {
		if f == nil {
			return nil
		}
		if _, err := lookup[*flow.Flow](flowID(f), flowKind); err != nil {
			return err
		}
		return handles.remove(flowID(f), flowKind)
	})
}

//export gbsgo_flow_get_info
func gbsgo_flow_get_info(f *C.gbs_flow, info *C.gbs_flow_info, errOut **C.char) C.int {
	return call("gbs_flow_get_info", errOut, func() error {
		fl, err := lookup[*flow.Flow](flowID(f), flowKind)
		if err != nil {
			return err
		}
		if err := checkOut(info, "gbs_flow_info"); err != nil {
			return err
		}
		*info = C.gbs_flow_info{size: info.size, dim: C.int64_t(fl.Dim()), layers: C.int64_t(fl.Layers()),
			n_warnings: C.int64_t(len(fl.Warnings())), conditional_layers: C.int64_t(fl.ConditionalLayers())}
		return nil
	})
}

//export gbsgo_flow_warnings
func gbsgo_flow_warnings(f *C.gbs_flow, warnings ***C.char, n *C.int64_t, errOut **C.char) C.int {
	return call("gbs_flow_warnings", errOut, func() error {
		fl, err := lookup[*flow.Flow](flowID(f), flowKind)
		if err != nil {
			return err
		}
		if warnings == nil {
			return argError("warnings is NULL")
		}
		ws := fl.Warnings()
		*warnings = newWarnings(ws)
		if n != nil {
			*n = C.int64_t(len(ws))
		}
		return nil
	})
}

// flowBatch looks up the flow of a call on n points and returns the number
// of doubles the points take (0 for n = 0, when the call does nothing).
func flowBatch(f *C.gbs_flow, n C.int64_t) (*flow.Flow, int, error) {
	fl, err := lookup[*flow.Flow](flowID(f), flowKind)
	if err != nil {
		return nil, 0, err
	}
	if n < 0 {
		return nil, 0, argError("n = %d is negative", int64(n))
	}
	if n == 0 {
		return fl, 0, nil
	}
	size, err := count([]string{"n", "d"}, n, C.int64_t(fl.Dim()))
	return fl, size, err
}

//export gbsgo_flow_log_prob
func gbsgo_flow_log_prob(f *C.gbs_flow, x *C.double, n C.int64_t, logq *C.double, errOut **C.char) C.int {
	return call("gbs_flow_log_prob", errOut, func() error {
		fl, size, err := flowBatch(f, n)
		if err != nil || size == 0 {
			return err
		}
		xs, err := doubles(x, size, "x")
		if err != nil {
			return err
		}
		out, err := doubles(logq, int(n), "logq")
		if err != nil {
			return err
		}
		fl.LogProb(out, xs)
		return nil
	})
}

//export gbsgo_flow_sample
func gbsgo_flow_sample(f *C.gbs_flow, n C.int64_t, seed C.uint64_t, x *C.double, logq *C.double, errOut **C.char) C.int {
	return call("gbs_flow_sample", errOut, func() error {
		fl, size, err := flowBatch(f, n)
		if err != nil || size == 0 {
			return err
		}
		xs, err := doubles(x, size, "x")
		if err != nil {
			return err
		}
		lq, err := optionalDoubles(logq, int(n), "logq")
		if err != nil {
			return err
		}
		if lq == nil {
			// The caller holds x; this buffer is ours, so it is checked.
			if err := memlimit.Check(fmt.Sprintf("n = %d log q values", int64(n)), 8, int(n)); err != nil {
				return err
			}
			lq = make([]float64, n)
		}
		fl.Sample(xs, lq, seedpkg.New(uint64(seed), 0))
		return nil
	})
}

// mapPoints runs the flow's forward or inverse map on n points.
func mapPoints(fn string, f *C.gbs_flow, in *C.double, n C.int64_t, out, logdet *C.double, errOut **C.char, inverse bool) C.int {
	return call(fn, errOut, func() error {
		fl, size, err := flowBatch(f, n)
		if err != nil || size == 0 {
			return err
		}
		inName, outName := "x", "z"
		if inverse {
			inName, outName = "z", "x"
		}
		src, err := doubles(in, size, inName)
		if err != nil {
			return err
		}
		dst, err := doubles(out, size, outName)
		if err != nil {
			return err
		}
		ld, err := doubles(logdet, int(n), "logdet")
		if err != nil {
			return err
		}
		if inverse {
			fl.Inverse(dst, ld, src)
		} else {
			fl.Forward(dst, ld, src)
		}
		return nil
	})
}

//export gbsgo_flow_forward
func gbsgo_flow_forward(f *C.gbs_flow, x *C.double, n C.int64_t, z, logdet *C.double, errOut **C.char) C.int {
	return mapPoints("gbs_flow_forward", f, x, n, z, logdet, errOut, false)
}

//export gbsgo_flow_inverse
func gbsgo_flow_inverse(f *C.gbs_flow, z *C.double, n C.int64_t, x, logdet *C.double, errOut **C.char) C.int {
	return mapPoints("gbs_flow_inverse", f, z, n, x, logdet, errOut, true)
}

//export gbsgo_flow_save
func gbsgo_flow_save(f *C.gbs_flow, path *C.char, errOut **C.char) C.int {
	return call("gbs_flow_save", errOut, func() error {
		fl, err := lookup[*flow.Flow](flowID(f), flowKind)
		if err != nil {
			return err
		}
		if path == nil {
			return argError("path is NULL")
		}
		b, err := fl.MarshalBinary()
		if err != nil {
			return err
		}
		if err := os.WriteFile(C.GoString(path), b, 0o644); err != nil {
			return newError(C.GBS_ERR_IO, "%v", err)
		}
		return nil
	})
}

// loadFlow decodes a serialized flow into a new handle at *out.
func loadFlow(b []byte, out **C.gbs_flow) error {
	var fl flow.Flow
	if err := fl.UnmarshalBinary(b); err != nil {
		return err
	}
	*out = flowHandle(handles.add(&fl))
	return nil
}

//export gbsgo_flow_load
func gbsgo_flow_load(path *C.char, out **C.gbs_flow, errOut **C.char) C.int {
	return call("gbs_flow_load", errOut, func() error {
		if out == nil {
			return argError("out is NULL")
		}
		*out = nil
		if path == nil {
			return argError("path is NULL")
		}
		b, err := os.ReadFile(C.GoString(path))
		if err != nil {
			return newError(C.GBS_ERR_IO, "%v", err)
		}
		return loadFlow(b, out)
	})
}

//export gbsgo_flow_to_buffer
func gbsgo_flow_to_buffer(f *C.gbs_flow, buf unsafe.Pointer, capacity C.int64_t, length *C.int64_t, errOut **C.char) C.int {
	return call("gbs_flow_to_buffer", errOut, func() error {
		fl, err := lookup[*flow.Flow](flowID(f), flowKind)
		if err != nil {
			return err
		}
		if length == nil {
			return argError("len is NULL")
		}
		if capacity < 0 {
			return argError("cap = %d is negative", int64(capacity))
		}
		b, err := fl.MarshalBinary()
		if err != nil {
			return err
		}
		*length = C.int64_t(len(b))
		if buf == nil {
			return nil
		}
		if int64(capacity) < int64(len(b)) {
			return newError(C.GBS_ERR_BUFFER_TOO_SMALL, "cap = %d bytes, the flow needs %d", int64(capacity), len(b))
		}
		copy(unsafe.Slice((*byte)(buf), len(b)), b)
		return nil
	})
}

//export gbsgo_flow_from_buffer
func gbsgo_flow_from_buffer(buf unsafe.Pointer, length C.int64_t, out **C.gbs_flow, errOut **C.char) C.int {
	return call("gbs_flow_from_buffer", errOut, func() error {
		if out == nil {
			return argError("out is NULL")
		}
		*out = nil
		if length <= 0 {
			return argError("len = %d, want at least 1", int64(length))
		}
		if buf == nil {
			return argError("buf is NULL")
		}
		b := append([]byte(nil), unsafe.Slice((*byte)(buf), int(length))...)
		return loadFlow(b, out)
	})
}
