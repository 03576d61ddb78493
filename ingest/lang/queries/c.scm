; C definitions and references (see python.scm for the capture
; convention).

(function_definition declarator: (function_declarator declarator: (identifier) @name)) @definition.func

(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.func

(function_definition declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))) @definition.func

(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct

(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.union

(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum

(type_definition declarator: (type_identifier) @name) @definition.type

(preproc_function_def name: (identifier) @name) @definition.macro

(preproc_def name: (identifier) @name) @definition.macro

(translation_unit (declaration declarator: (identifier) @name) @definition.variable)

(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)

(translation_unit (declaration declarator: (function_declarator declarator: (identifier) @name)) @definition.func)

(enumerator name: (identifier) @name) @definition.constant

(call_expression function: (identifier) @name) @reference.call

(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call

(type_identifier) @name @reference.type
