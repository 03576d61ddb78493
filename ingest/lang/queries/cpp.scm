; C++ definitions and references (see python.scm for the capture
; convention). A name may be qualified (Foo::bar, ~Foo, operator==).

(function_definition declarator: (function_declarator declarator: (_) @name)) @definition.func

(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @name))) @definition.func

(function_definition declarator: (reference_declarator (function_declarator declarator: (_) @name))) @definition.func

(field_declaration declarator: (function_declarator declarator: (_) @name)) @definition.method

(declaration declarator: (function_declarator declarator: (_) @name)) @definition.func

(class_specifier name: (_) @name body: (field_declaration_list)) @definition.class

(struct_specifier name: (_) @name body: (field_declaration_list)) @definition.struct

(union_specifier name: (_) @name body: (field_declaration_list)) @definition.union

(enum_specifier name: (_) @name body: (enumerator_list)) @definition.enum

(namespace_definition name: (_) @name) @definition.module

(type_definition declarator: (type_identifier) @name) @definition.type

(alias_declaration name: (type_identifier) @name) @definition.type

(concept_definition name: (identifier) @name) @definition.type

(preproc_function_def name: (identifier) @name) @definition.macro

(preproc_def name: (identifier) @name) @definition.macro

(translation_unit (declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)

(field_declaration declarator: (field_identifier) @name) @definition.field

(call_expression function: (identifier) @name) @reference.call

(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call

(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call

(type_identifier) @name @reference.type
