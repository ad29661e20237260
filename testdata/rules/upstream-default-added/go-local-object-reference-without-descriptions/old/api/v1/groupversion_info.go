// Package v1 holds the example.com/v1 API.
// +kubebuilder:object:generate=true
// +groupName=example.com
package v1

import "k8s.io/apimachinery/pkg/runtime/schema"

// GroupVersion is the group and version of these kinds.
var GroupVersion = schema.GroupVersion{Group: "example.com", Version: "v1"}
