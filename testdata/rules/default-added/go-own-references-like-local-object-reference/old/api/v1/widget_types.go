package v1

import (
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalObjectReference is the project's own reference, named like the built-in type: its
// default is the project's.
type LocalObjectReference struct {
	// Name of the Secret.
	// +kubebuilder:default=""
	Name string `json:"name"`
}

// WidgetSpec is what a Widget asks for.
type WidgetSpec struct {
	// ConnectionSecret is another module's type of the same name (fluxcd's), not k8s.io/api's.
	ConnectionSecret *meta.LocalObjectReference `json:"connectionSecret,omitempty"`
}

// Widget is a widget.
// +kubebuilder:object:root=true
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WidgetSpec `json:"spec,omitempty"`
}

// GadgetSpec is what a Gadget asks for.
type GadgetSpec struct {
	// ConnectionSecret is the project's own LocalObjectReference.
	ConnectionSecret *LocalObjectReference `json:"connectionSecret,omitempty"`
}

// Gadget is a gadget.
// +kubebuilder:object:root=true
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GadgetSpec `json:"spec,omitempty"`
}

// SprocketSpec is what a Sprocket asks for.
type SprocketSpec struct {
	// ConnectionSecret is k8s.io/api's type, but the CRD's schema is not what it generates
	// (the node has a namespace too): the Go type is no evidence for it.
	ConnectionSecret *corev1.LocalObjectReference `json:"connectionSecret,omitempty"`
}

// Sprocket is a sprocket.
// +kubebuilder:object:root=true
type Sprocket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec SprocketSpec `json:"spec,omitempty"`
}
