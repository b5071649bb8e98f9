package main

/*
#include <stdint.h>
#include "gbs.h"

// A handle's pointer value is its registry id; C never dereferences it.
// The conversions are done in C so that Go never makes a pointer from an
// integer.
static gbs_flow *gbs_flow_of_id(uint64_t id) { return (gbs_flow *)(uintptr_t)id; }
static gbs_cancel_token *gbs_token_of_id(uint64_t id) { return (gbs_cancel_token *)(uintptr_t)id; }
static gbs_problem *gbs_problem_of_id(uint64_t id) { return (gbs_problem *)(uintptr_t)id; }
*/
import "C"

import (
	"sync"
	"unsafe"
)

// handleBase is the first handle id. Ids are never reused, so a freed
// handle is detected. They lie far above any canonical user-space address,
// so a handle held in a pointer-typed Go variable can never look like a
// pointer into the Go heap, and can never be mistaken for a real object.
const handleBase = 1 << 52

// registry maps handle ids to the Go objects they stand for.
type registry struct {
	mu   sync.Mutex
	next uint64 // ids handed out so far
	objs map[uint64]any
}

var handles = &registry{objs: map[uint64]any{}}

// add registers obj and returns its new id.
func (r *registry) add(obj any) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := handleBase + r.next
	r.next++
	r.objs[id] = obj
	return id
}

// get returns the object of id. kind names the expected handle type in
// messages.
func (r *registry) get(id uint64, kind string) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == 0 {
		return nil, newError(C.GBS_ERR_HANDLE, "%s handle is NULL", kind)
	}
	obj, ok := r.objs[id]
	if !ok {
		return nil, r.missing(id, kind)
	}
	return obj, nil
}

// remove unregisters id.
func (r *registry) remove(id uint64, kind string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.objs[id]; !ok {
		return r.missing(id, kind)
	}
	delete(r.objs, id)
	return nil
}

func (r *registry) missing(id uint64, kind string) error {
	if id >= handleBase && id < handleBase+r.next {
		return newError(C.GBS_ERR_HANDLE, "%s handle %#x was already freed", kind, id)
	}
	return newError(C.GBS_ERR_HANDLE, "%#x is not a %s handle of this library", id, kind)
}

// live returns the number of registered objects.
func (r *registry) live() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.objs)
}

// lookup returns the object of id if it is a T.
func lookup[T any](id uint64, kind string) (T, error) {
	obj, err := handles.get(id, kind)
	if err != nil {
		var zero T
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return t, newError(C.GBS_ERR_HANDLE, "handle %#x is not a %s handle", id, kind)
	}
	return t, nil
}

func flowID(p *C.gbs_flow) uint64          { return uint64(uintptr(unsafe.Pointer(p))) }
func tokenID(p *C.gbs_cancel_token) uint64 { return uint64(uintptr(unsafe.Pointer(p))) }
func problemID(p *C.gbs_problem) uint64    { return uint64(uintptr(unsafe.Pointer(p))) }

func flowHandle(id uint64) *C.gbs_flow          { return C.gbs_flow_of_id(C.uint64_t(id)) }
func tokenHandle(id uint64) *C.gbs_cancel_token { return C.gbs_token_of_id(C.uint64_t(id)) }
func problemHandle(id uint64) *C.gbs_problem    { return C.gbs_problem_of_id(C.uint64_t(id)) }
