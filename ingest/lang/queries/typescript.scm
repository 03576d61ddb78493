; TypeScript and TSX definitions and references (see python.scm for the
; capture convention).

(class_declaration name: (type_identifier) @name) @definition.class

(abstract_class_declaration name: (type_identifier) @name) @definition.class

(interface_declaration name: (type_identifier) @name) @definition.interface

(type_alias_declaration name: (type_identifier) @name) @definition.type

(enum_declaration name: (identifier) @name) @definition.enum

(module name: (_) @name) @definition.module

(internal_module name: (_) @name) @definition.module

(function_declaration name: (identifier) @name) @definition.func

(generator_function_declaration name: (identifier) @name) @definition.func

(function_signature name: (identifier) @name) @definition.func

(method_definition name: (_) @name) @definition.method

(method_signature name: (_) @name) @definition.method

(abstract_method_signature name: (_) @name) @definition.method

(public_field_definition name: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method

(lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)])) @definition.func

(variable_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)])) @definition.func

(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant)

(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant))

(public_field_definition name: (property_identifier) @name) @definition.field

(call_expression function: (identifier) @name) @reference.call

(call_expression function: (member_expression property: (property_identifier) @name)) @reference.call

(new_expression constructor: (identifier) @name) @reference.class

(type_annotation (type_identifier) @name) @reference.type

(extends_clause value: (identifier) @name) @reference.class

(implements_clause (type_identifier) @name) @reference.type
