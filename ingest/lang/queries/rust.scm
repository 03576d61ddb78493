; Rust definitions and references (see python.scm for the capture
; convention). An impl block's name is built from its trait and type.

(struct_item name: (type_identifier) @name) @definition.struct

(enum_item name: (type_identifier) @name) @definition.enum

(union_item name: (type_identifier) @name) @definition.union

(trait_item name: (type_identifier) @name) @definition.trait

(impl_item type: (_) @name) @definition.impl

(mod_item name: (identifier) @name) @definition.module

(function_item name: (identifier) @name) @definition.func

(function_signature_item name: (identifier) @name) @definition.func

(macro_definition name: (identifier) @name) @definition.macro

(type_item name: (type_identifier) @name) @definition.type

(const_item name: (identifier) @name) @definition.constant

(static_item name: (identifier) @name) @definition.variable

(call_expression function: (identifier) @name) @reference.call

(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call

(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call

(macro_invocation macro: (identifier) @name) @reference.macro

(impl_item trait: (type_identifier) @name) @reference.trait

(type_identifier) @name @reference.type
