package main

/*
#include "gbs.h"
*/
import "C"

import (
	"context"
)

// cancelToken is a context that gbs_cancel cancels; calls that carry the
// token run under it.
type cancelToken struct {
	ctx    context.Context
	cancel context.CancelFunc
}

const tokenKind = "gbs_cancel_token"

//export gbsgo_cancel_token_new
func gbsgo_cancel_token_new(out **C.gbs_cancel_token, errOut **C.char) C.int {
	return call("gbs_cancel_token_new", errOut, func() error {
		if out == nil {
			return argError("out is NULL")
		}
		ctx, cancel := context.WithCancel(context.Background())
		*out = tokenHandle(handles.add(&cancelToken{ctx: ctx, cancel: cancel}))
		return nil
	})
}

//export gbsgo_cancel
func gbsgo_cancel(token *C.gbs_cancel_token, errOut **C.char) C.int {
	id := tokenID(token)
	return call("gbs_cancel", errOut, func() error {
		t, err := lookup[*cancelToken](id, tokenKind)
		if err != nil {
			return err
		}
		t.cancel()
		return nil
	})
}

//export gbsgo_cancel_token_canceled
func gbsgo_cancel_token_canceled(token *C.gbs_cancel_token, canceled *C.int32_t, errOut **C.char) C.int {
	id := tokenID(token)
	return call("gbs_cancel_token_canceled", errOut, func() error {
		if canceled == nil {
			return argError("canceled is NULL")
		}
		t, err := lookup[*cancelToken](id, tokenKind)
		if err != nil {
			return err
		}
		*canceled = 0
		if t.ctx.Err() != nil {
			*canceled = 1
		}
		return nil
	})
}

//export gbsgo_cancel_token_free
func gbsgo_cancel_token_free(token *C.gbs_cancel_token, errOut **C.char) C.int {
	id := tokenID(token)
	return call("gbs_cancel_token_free", errOut, func() error {
		if id == 0 {
			return nil
		}
		if _, err := lookup[*cancelToken](id, tokenKind); err != nil {
			return err
		}
		return handles.remove(id, tokenKind)
	})
}

// callContext returns the context of a call whose options carry the given
// tokens (NULL for none); any of them cancels it. The returned function
// releases the context's resources.
func callContext(tokens ...*C.gbs_cancel_token) (context.Context, context.CancelFunc, error) {
	ctx, cancel := context.WithCancel(context.Background())
	for _, tok := range tokens {
		if tok == nil {
			continue
		}
		t, err := lookup[*cancelToken](tokenID(tok), tokenKind)
		if err != nil {
			cancel()
			return nil, nil, err
		}
		if t.ctx.Err() != nil {
			cancel()
		}
		stop := context.AfterFunc(t.ctx, cancel)
		prev := cancel
		cancel = func() { stop(); prev() }
	}
	return ctx, cancel, nil
}
