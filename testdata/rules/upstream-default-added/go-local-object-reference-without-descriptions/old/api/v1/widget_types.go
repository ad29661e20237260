package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is what a Widget asks for.
type WidgetSpec struct {
	// ConnectionSecret is the Secret that holds the connection URI.
	ConnectionSecret *corev1.LocalObjectReference `json:"connectionSecret,omitempty"`
	// PullSecrets are the Secrets the image is pulled with.
	PullSecrets []corev1.LocalObjectReference `json:"pullSecrets,omitempty"`
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
	// ConnectionSecret is the Secret that holds the connection URI.
	ConnectionSecret *corev1.LocalObjectReference `json:"connectionSecret,omitempty"`
}

// Gadget is a gadget, a kind without a root marker (as argo-workflows writes its kinds):
// controller-gen takes it for one because it embeds TypeMeta and ObjectMeta.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GadgetSpec `json:"spec,omitempty"`
}
