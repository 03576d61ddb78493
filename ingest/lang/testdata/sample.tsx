import React from "react";

interface Props {
  title: string;
}

/** A greeting. */
export function Hello({ title }: Props) {
  return <div className="hello">{title}</div>;
}

export const List = (props: Props) => {
  return (
    <ul>
      <li>{props.title}</li>
    </ul>
  );
};

class Counter extends React.Component<Props> {
  render() {
    return <span>{this.props.title}</span>;
  }
}
