; Java definitions and references (see python.scm for the capture
; convention).

(class_declaration name: (identifier) @name) @definition.class

(interface_declaration name: (identifier) @name) @definition.interface

(enum_declaration name: (identifier) @name) @definition.enum

(record_declaration name: (identifier) @name) @definition.class

(annotation_type_declaration name: (identifier) @name) @definition.interface

(method_declaration name: (identifier) @name) @definition.method

(constructor_declaration name: (identifier) @name) @definition.method

(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field

(method_invocation name: (identifier) @name) @reference.call

(object_creation_expression type: (type_identifier) @name) @reference.class

(superclass (type_identifier) @name) @reference.class

(super_interfaces (type_list (type_identifier) @name)) @reference.type

(type_identifier) @name @reference.type
